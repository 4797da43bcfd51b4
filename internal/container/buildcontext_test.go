package container

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func entries(t *testing.T, dir, bundle string) map[string]string {
	t.Helper()
	buf, err := buildContext(dir, bundle)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	tr := tar.NewReader(buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = string(b)
	}
}

const pemCert = "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n"

func TestBuildContextHonoursDockerignoreAndAddsCerts(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "Dockerfile"), "FROM debian:trixie\n")
	write(t, filepath.Join(dir, ".dockerignore"), "node_modules\n*.log\n")
	write(t, filepath.Join(dir, "src/app.js"), "x")
	write(t, filepath.Join(dir, "node_modules/dep/index.js"), "big")
	write(t, filepath.Join(dir, "debug.log"), "noise")
	write(t, filepath.Join(dir, CACertsDir, "stale.crt"), "from a manual build")
	bundle := filepath.Join(t.TempDir(), "bundle.pem")
	write(t, bundle, pemCert+"junk between\n"+pemCert)

	got := entries(t, dir, bundle)
	for _, want := range []string{"Dockerfile", "src/app.js", CACertsDir + "/001.crt", CACertsDir + "/002.crt"} {
		if _, ok := got[want]; !ok {
			t.Errorf("context lacks %s", want)
		}
	}
	for _, unwanted := range []string{"node_modules/dep/index.js", "debug.log", CACertsDir + "/stale.crt", CACertsDir + "/003.crt"} {
		if _, ok := got[unwanted]; ok {
			t.Errorf("context holds %s", unwanted)
		}
	}
	if got[CACertsDir+"/001.crt"] != pemCert {
		t.Errorf("certificate file = %q, want exactly one PEM certificate", got[CACertsDir+"/001.crt"])
	}
}

func TestBuildContextWithoutBundleStillHasTheCertFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "Dockerfile"), "FROM debian:trixie\n")
	got := entries(t, dir, "")
	if _, ok := got[CACertsDir+"/"]; !ok {
		t.Errorf("no %s/ folder: a Dockerfile's COPY of it would fail", CACertsDir)
	}
}

func TestBuildContextRejectsABundleWithoutCertificates(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "Dockerfile"), "FROM debian:trixie\n")
	bundle := filepath.Join(t.TempDir(), "empty.pem")
	write(t, bundle, "nothing here")
	if _, err := buildContext(dir, bundle); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("err = %v, want the empty bundle named", err)
	}
}

func TestTags(t *testing.T) {
	cases := []struct {
		b    BuildSpec
		want string
	}{
		{BuildSpec{Context: "targets/tools"}, "iotbench/tools:latest"},
		{BuildSpec{Context: "targets/jvm", Dockerfile: "spring-mvc/Dockerfile", Args: map[string]string{"JDK": "21"}}, "iotbench/jvm-spring-mvc:jdk-21"},
		{BuildSpec{Context: "targets/js", Dockerfile: "express/Dockerfile"}, "iotbench/js-express:latest"},
		{BuildSpec{Context: "targets/js", Dockerfile: "Dockerfile"}, "iotbench/js:latest"},
		{BuildSpec{Context: "x", Args: map[string]string{"B": "2", "A": "a/b"}}, "iotbench/x:a-a-b_b-2"},
		// A paired run's baseline, built from another checkout's folders of the same names.
		{BuildSpec{Context: "../base/targets/js", Dockerfile: "express/Dockerfile", Suffix: "base"}, "iotbench/js-express:base"},
		{BuildSpec{Context: "targets/jvm", Dockerfile: "spring-mvc/Dockerfile", Args: map[string]string{"JDK": "21"}, Suffix: "base"}, "iotbench/jvm-spring-mvc:jdk-21_base"},
	}
	for _, c := range cases {
		if got := c.b.Tag(); got != c.want {
			t.Errorf("Tag(%v) = %q, want %q", c.b, got, c.want)
		}
	}
}
