package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/iotbench/iotbench/internal/kube"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/run"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/spf13/cobra"
)

// K8sOptions are the flags of `iotbench k8s`.
type K8sOptions struct {
	Streams       Streams
	File          string
	Scenario      string
	Target        string
	Generators    int
	TargetCPUs    int
	Namespace     string
	Registry      string
	IotbenchImage string
	StartIn       time.Duration
	ResultsClaim  string
	now           func() time.Time
}

// NewCmdK8s builds `iotbench k8s`: the Kubernetes manifests of one scenario's target and its
// generator shards (docs/scale.md).
func NewCmdK8s(s Streams, runF func(context.Context, *K8sOptions) error) *cobra.Command {
	o := &K8sOptions{Streams: s, now: time.Now}
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Print the Kubernetes manifests of a target (a pod on whole CPUs) and its generator shards (an indexed Job)",
		Long: `Print the Kubernetes layout of one scenario's target: a ConfigMap with the shards' spec, the
target's pod in the Guaranteed QoS class (whole CPUs, which the kubelet's static CPU manager makes
exclusive) and its Service, and an indexed Job of generator shards that start their measured phase
at one time and write their results to a shared volume. Merge them with iotbench shard --merge.`,
		Example: `  iotbench k8s --scenario io-heavy --target fastify --generators 4 --registry registry.example/ | kubectl apply -f -
  # once the Job is complete, on a machine that mounts the results claim:
  iotbench shard --merge /mnt/iotbench-results`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return k8sRun(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.File, "file", "scenarios.yaml", "scenario matrix")
	f.StringVar(&o.Scenario, "scenario", "", "scenario (default: the file's default_scenario)")
	f.StringVar(&o.Target, "target", "", "the target to lay out (default: the scenario's first)")
	f.IntVar(&o.Generators, "generators", 2, "generator shards: the indexed Job's completions")
	f.IntVar(&o.TargetCPUs, "target-cpus", 1, "the target's whole CPUs (its request and limit)")
	f.StringVar(&o.Namespace, "namespace", "iotbench", "the manifests' namespace")
	f.StringVar(&o.Registry, "registry", "", "prefix of the images, where the cluster pulls them from, e.g. registry.example/")
	f.StringVar(&o.IotbenchImage, "iotbench-image", "iotbench/iotbench:latest", "the image holding the iotbench binary the shards run")
	f.DurationVar(&o.StartIn, "start-in", 3*time.Minute, "when the shards' measured phase starts, from now")
	f.StringVar(&o.ResultsClaim, "results-claim", "iotbench-results", "a ReadWriteMany claim the shards write results to")
	return cmd
}

func k8sRun(o *K8sOptions) error {
	f, err := scenario.Load(o.File)
	if err != nil {
		return usageError(err)
	}
	name := o.Scenario
	if name == "" {
		name = f.DefaultScenario
	}
	over := plan.Overrides{Load: loadspec.Spec{Trials: 1, Given: []loadspec.Key{loadspec.Trials}}}
	if o.Target != "" {
		over.Targets = []string{o.Target}
	}
	p, err := plan.Make(f, name, over, []int{0, 1})
	if err != nil {
		return run.PlanError(err)
	}
	if len(p.Cells) == 0 {
		return usagef("scenario %s has no target to lay out", name)
	}
	c := p.Cells[0]
	err = kube.Render(o.Streams.Out, c, kube.Layout{
		Namespace: o.Namespace, Registry: o.Registry, IotbenchImage: o.IotbenchImage, Generators: o.Generators,
		TargetCPUs: o.TargetCPUs, Start: o.now().Add(o.StartIn), ResultsClaim: o.ResultsClaim,
	})
	if err != nil {
		return usageError(fmt.Errorf("--generators %d: %w", o.Generators, err))
	}
	return nil
}
