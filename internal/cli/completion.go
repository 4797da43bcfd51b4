package cli

import (
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/spf13/cobra"
)

// versionLine is what `iotbench version` and `iotbench --version` print.
func versionLine() string {
	return hostinfo.VersionLine() + "\n"
}

// completeNames completes --scenario and --targets of cmd from the scenario file its --file
// names: `iotbench completion bash|zsh|fish|powershell` (cobra's) prints the shell's script.
func completeNames(cmd *cobra.Command) {
	load := func(cmd *cobra.Command) *scenario.File {
		path, _ := cmd.Flags().GetString("file")
		f, err := scenario.Load(path)
		if err != nil {
			return nil
		}
		return f
	}
	if cmd.Flags().Lookup("scenario") != nil {
		_ = cmd.RegisterFlagCompletionFunc("scenario", func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
			f := load(cmd)
			if f == nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return withPrefix(f.ScenarioOrder, prefix, nil), cobra.ShellCompDirectiveNoFileComp
		})
	}
	_ = cmd.RegisterFlagCompletionFunc("targets", func(cmd *cobra.Command, _ []string, typed string) ([]string, cobra.ShellCompDirective) {
		f := load(cmd)
		if f == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := f.TargetOrder
		if fl := cmd.Flags().Lookup("scenario"); fl != nil {
			name := fl.Value.String()
			if name == "" {
				name = f.DefaultScenario
			}
			if sc, ok := f.Scenarios[name]; ok && len(sc.Targets) > 0 {
				names = sc.Targets
			}
		}
		// A comma-separated list: complete its last name, after those already given.
		given, last := "", typed
		if i := strings.LastIndex(typed, ","); i >= 0 {
			given, last = typed[:i+1], typed[i+1:]
		}
		var out []string
		for _, n := range withPrefix(names, last, strings.Split(strings.TrimSuffix(given, ","), ",")) {
			out = append(out, given+n)
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// withPrefix are the names starting with prefix, but not those in skip.
func withPrefix(names []string, prefix string, skip []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && !slices.Contains(skip, n) {
			out = append(out, n)
		}
	}
	return out
}
