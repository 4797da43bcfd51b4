package container

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	ctypes "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Generator shards on a generator host (iotbench run --generator-host): each shard is a container
// of an image holding this iotbench binary, on that host's engine, pinned and hardened as a
// target is, on the host network. The shard protocol (internal/shard) runs over the container's
// attach stream: its stdin and its stdout, demultiplexed; its interval log comes back in that
// stream too, since the engine's archive API cannot read a tmpfs and the root is read-only.

// ShardImageRepo is the repository of the shard image; its tag is a hash of the binary, so that
// an engine keeps one image per iotbench build and rebuilds nothing it has.
const ShardImageRepo = "iotbench/shard"

// ShardMemory bounds a shard's container: its histograms and the answers in flight, with room.
const ShardMemory = 1 << 30

// shardDockerfile puts the binary on the root image, run as nobody.
const shardDockerfile = `FROM ` + RootImage + `
COPY iotbench /usr/local/bin/iotbench
USER 65534
ENTRYPOINT ["/usr/local/bin/iotbench", "shard"]
`

// StaticBinary checks that bin needs no shared library (a Go build with CGO_ENABLED=0): the image
// of the root image and the binary alone must run it.
func StaticBinary(bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("%s: not an executable this image can hold: %w", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is linked dynamically: build it statically for generator hosts (CGO_ENABLED=0 go build ./cmd/iotbench, as make build does)", bin)
		}
	}
	return nil
}

// ShardImageTag is the shard image's tag for the binary bin.
func ShardImageTag(bin string) (string, error) {
	f, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return ShardImageRepo + ":" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ShardImage makes sure d holds the shard image of the binary bin and returns its tag: when d
// lacks it, the root image is copied from local (unless d has it: the local engine does) and the
// image built on d. built says whether it was.
func (d *Docker) ShardImage(ctx context.Context, local *Docker, bin string) (tag string, built bool, err error) {
	if err := StaticBinary(bin); err != nil {
		return "", false, err
	}
	if tag, err = ShardImageTag(bin); err != nil {
		return "", false, err
	}
	if _, err := d.imageInspect(ctx, tag); err == nil {
		return tag, false, nil
	}
	if err := d.Transfer(ctx, local, RootImage); err != nil {
		return "", false, err
	}
	dir, err := os.MkdirTemp("", "iotbench-shard-image-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(dir)
	// The context's folder names the image (BuildSpec.Tag): iotbench/shard.
	bctx := filepath.Join(dir, "shard")
	if err := os.Mkdir(bctx, 0o755); err != nil {
		return "", false, err
	}
	if err := copyFile(bin, filepath.Join(bctx, "iotbench"), 0o755); err != nil {
		return "", false, err
	}
	if err := os.WriteFile(filepath.Join(bctx, "Dockerfile"), []byte(shardDockerfile), 0o644); err != nil {
		return "", false, err
	}
	noCA := *d
	noCA.CABundle = "" // nothing in it reaches a registry
	spec := BuildSpec{Context: bctx, Dockerfile: "Dockerfile", Suffix: strings.TrimPrefix(tag, ShardImageRepo+":")}
	if _, err := noCA.Build(ctx, spec, io.Discard); err != nil {
		return "", false, fmt.Errorf("the generator shard image on the engine at %s: %w", d.c.DaemonHost(), err)
	}
	return tag, true, nil
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ShardSpec is one generator shard's container.
type ShardSpec struct {
	Image  string
	Index  int // from 0
	CPUSet string
	Memory int64
}

// Name is how the shard's container is labelled as a target (LabelTarget), e.g. in iotbench clean.
func (s ShardSpec) Name() string { return fmt.Sprintf("generator-shard-%d", s.Index+1) }

// Attached is a started shard's container: its stdin, its stdout, and Wait, which ends and
// removes it and says how it ended (its error output when it failed).
type Attached struct {
	In   io.WriteCloser
	Out  io.Reader
	Wait func() error
}

// shardExit is how long a shard whose protocol is over gets to exit by itself before it is removed.
var shardExit = 10 * time.Second

// StartShard creates s's container, attaches to it and starts it. The container is removed by
// Wait, or as soon as ctx ends: a cancelled run leaves no shard loading the target.
func (d *Docker) StartShard(ctx context.Context, s ShardSpec) (Attached, error) {
	shardEngines.add(d) // before the container exists: a second Ctrl-C may come at any time
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	created, err := d.c.ContainerCreate(cctx, client.ContainerCreateOptions{
		Name: fmt.Sprintf("iotbench-%s-%d-%d", s.Name(), d.pid, time.Now().UnixNano()%1e6),
		Config: &ctypes.Config{
			Image:  s.Image,
			Labels: d.labels(s.Name()),
			// The protocol's stdin, closed by the parent when it is done.
			OpenStdin: true, StdinOnce: true, AttachStdin: true, AttachStdout: true, AttachStderr: true,
		},
		HostConfig: d.hostConfig(Spec{CPUSet: s.CPUSet, Memory: s.Memory}),
	})
	if err != nil {
		return Attached{}, fmt.Errorf("creating %s's container on the engine at %s: %w", s.Name(), d.c.DaemonHost(), err)
	}
	remove := func() error { return d.removeContainer(context.WithoutCancel(ctx), created.ID) }
	att, err := d.c.ContainerAttach(cctx, created.ID, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		remove()
		return Attached{}, fmt.Errorf("attaching to %s's container: %w", s.Name(), err)
	}
	outR, outW := io.Pipe()
	stderr := &lastLines{n: 20}
	demuxed := make(chan struct{})
	go func() {
		_, err := stdcopy.StdCopy(outW, stderr, att.Reader)
		outW.CloseWithError(err)
		close(demuxed)
	}()
	if _, err := d.c.ContainerStart(cctx, created.ID, client.ContainerStartOptions{}); err != nil {
		att.Close()
		remove()
		<-demuxed
		return Attached{}, fmt.Errorf("starting %s's container: %w", s.Name(), err)
	}
	waited := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			remove()
		case <-waited:
		}
	}()
	wait := func() error {
		defer close(waited)
		select {
		case <-demuxed: // it ended by itself
		case <-time.After(shardExit):
		}
		code, known := d.exitCode(context.WithoutCancel(ctx), created.ID)
		err := remove()
		att.Close()
		<-demuxed
		switch {
		case err != nil:
			return fmt.Errorf("removing %s's container: %w", s.Name(), err)
		case known && code != 0:
			return fmt.Errorf("%s's container exited with code %d: %s", s.Name(), code, strings.TrimSpace(stderr.String()))
		}
		return nil
	}
	return Attached{In: closeWriter{att.HijackedResponse}, Out: outR, Wait: wait}, nil
}

// exitCode is the container's exit code, once it has exited.
func (d *Docker) exitCode(ctx context.Context, id string) (int, bool) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ins, err := d.c.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil || ins.Container.State == nil || ins.Container.State.Running {
		return 0, false
	}
	return ins.Container.State.ExitCode, true
}

// closeWriter writes to a container's stdin; Close ends it (the shard reads its end) and keeps
// the stream's other half open for the shard's last lines.
type closeWriter struct{ h client.HijackedResponse }

func (w closeWriter) Write(p []byte) (int, error) { return w.h.Conn.Write(p) }
func (w closeWriter) Close() error {
	if err := w.h.CloseWrite(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}

var _ io.WriteCloser = closeWriter{}

// removeImages removes the tags of repo but keep, and returns them (on a dry run, those it would
// remove). Each iotbench build makes a shard image on every generator host it runs on, and an
// image is never used again once its binary is replaced; kept, they pile up. An image a container
// still uses is kept: the engine refuses to remove it (a run of another build in progress, its
// shards up; runs of two builds sharing a generator host at once are not supported anyway, as
// they would share its CPUs).
func (d *Docker) removeImages(ctx context.Context, repo, keep string, dryRun bool) ([]Found, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := d.c.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("reference", repo)})
	if err != nil {
		return nil, fmt.Errorf("listing the %s images: %w", repo, err)
	}
	var out []Found
	var errs []error
	for _, img := range res.Items {
		for _, tag := range img.RepoTags {
			if tag == keep || !strings.HasPrefix(tag, repo+":") {
				continue
			}
			if !dryRun {
				// With its untagged parents, the build's steps, as `docker rmi` does.
				_, err := d.c.ImageRemove(ctx, tag, client.ImageRemoveOptions{PruneChildren: true})
				switch {
				case cerrdefs.IsConflict(err), cerrdefs.IsNotFound(err):
					continue // in use, or removed beside this
				case err != nil:
					errs = append(errs, fmt.Errorf("removing image %s: %w", tag, err))
					continue
				}
			} else if img.Containers > 0 {
				continue // the engine would refuse
			}
			out = append(out, Found{ID: img.ID, Name: tag, Created: time.Unix(img.Created, 0), State: "image", Image: true})
		}
	}
	return out, errors.Join(errs...)
}
