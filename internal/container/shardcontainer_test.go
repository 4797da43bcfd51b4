package container

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestStaticBinary: the shard image holds the binary alone on the root image, so a binary that
// needs a dynamic loader or is no executable is refused, saying how to build one that is not.
func TestStaticBinary(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("not a program\n"), 0o644)
	main := filepath.Join(dir, "main.go")
	os.WriteFile(main, []byte("package main\n\nfunc main() {}\n"), 0o644)
	static := filepath.Join(dir, "static")
	build := exec.Command("go", "build", "-o", static, main)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct{ bin, want string }{
		{static, ""},
		{"/bin/sh", "/bin/sh is linked dynamically: build it statically for generator hosts (CGO_ENABLED=0 go build ./cmd/iotbench, as make build does)"},
		{text, text + ": not an executable this image can hold"},
		{filepath.Join(dir, "missing"), "open " + filepath.Join(dir, "missing")},
	} {
		err := StaticBinary(tc.bin)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", tc.bin, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.bin, err, tc.want)
		}
	}
}

// TestShardImageTag: one image per build of the binary, named by its content.
func TestShardImageTag(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o755)
		return p
	}
	a, b, c := write("a", "build one"), write("b", "build one"), write("c", "build two")
	ta, _ := ShardImageTag(a)
	tb, _ := ShardImageTag(b)
	tc, _ := ShardImageTag(c)
	if !regexp.MustCompile(`^iotbench/shard:[0-9a-f]{16}$`).MatchString(ta) || ta != tb || ta == tc {
		t.Errorf("tags %q, %q (same content), %q (other content)", ta, tb, tc)
	}
	if _, err := ShardImageTag(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing binary has a tag")
	}
}
