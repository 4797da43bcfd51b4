package container

import (
	"context"
	"encoding/base64"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/moby/moby/client"
)

// TestPushPutsTheImageInTheRegistry pushes the root image through the engine to a registry
// served by this test on loopback (an engine trusts 127.0.0.0/8 over plain HTTP), then asks the
// registry for the manifest under the name pushed.
func TestPushPutsTheImageInTheRegistry(t *testing.T) {
	d := connect(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go srv.Serve(ln)
	defer srv.Close()
	ref := ln.Addr().String() + "/iotbench-test/root:push"
	ctx := context.Background()
	if err := d.Push(ctx, RootImage, ref); err != nil {
		t.Fatal(err)
	}
	defer d.c.ImageRemove(ctx, ref, client.ImageRemoveOptions{})
	host, rest, _ := strings.Cut(ref, "/")
	name, tag, _ := strings.Cut(rest, ":")
	req, _ := http.NewRequest(http.MethodHead, "http://"+host+"/v2/"+name+"/manifests/"+tag, nil)
	req.Header.Set("Accept", "application/vnd.docker.distribution.manifest.v2+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the registry answers %d for %s's manifest", resp.StatusCode, ref)
	}
}

func TestRegistryAuth(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	os.WriteFile(cfg, []byte(`{"auths":{"registry.example":{"auth":"`+base64.StdEncoding.EncodeToString([]byte("bench:s3cret"))+`"},"https://other.example":{"auth":"`+base64.StdEncoding.EncodeToString([]byte("u:p"))+`"}}}`), 0o600)
	for _, tc := range []struct{ ref, file, want string }{
		{"registry.example/team/fastify:latest", cfg, `{"password":"s3cret","serveraddress":"registry.example","username":"bench"}`},
		{"other.example/fastify:latest", cfg, `{"password":"p","serveraddress":"other.example","username":"u"}`},
		{"127.0.0.1:5000/fastify:latest", cfg, `{}`},
		{"registry.example/fastify:latest", filepath.Join(dir, "absent.json"), `{}`},
	} {
		got, err := registryAuth(tc.ref, tc.file)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := base64.URLEncoding.DecodeString(got)
		if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.ref, b, tc.want)
		}
	}
}
