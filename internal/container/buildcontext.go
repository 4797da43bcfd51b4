package container

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// CACertsDir is the folder of the build context where iotbench puts the CA certificates the host
// trusts, one PEM file each, so that a Dockerfile's build stage can trust the same registries as
// the host (behind TLS inspection, Maven and npm fail otherwise). Dockerfiles install them with:
//
//	COPY .ca-certs/ /usr/local/share/ca-certificates/iotbench/
//	RUN update-ca-certificates
const CACertsDir = ".ca-certs"

// DefaultCABundle is where Debian keeps the host's trusted certificates.
const DefaultCABundle = "/etc/ssl/certs/ca-certificates.crt"

// epoch is the modification time of every file in a build context, so that the content alone
// decides the layer cache. Not 1970: tools skip copying a file whose time is not after a missing
// destination's 0 (Maven's resources plugin leaves such resources out of the jar).
var epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// buildContext tars dir for the Docker API, honouring its .dockerignore as the docker CLI does
// (the daemon does not), and adds caBundle's certificates under CACertsDir. caBundle may be empty.
func buildContext(dir, caBundle string) (*bytes.Buffer, error) {
	ignore, err := readIgnore(dir)
	if err != nil {
		return nil, err
	}
	buf := &bytes.Buffer{}
	tw := tar.NewWriter(buf)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if rel == CACertsDir {
			return filepath.SkipDir // iotbench writes its own
		}
		if skip, err := ignore.MatchesOrParentMatches(rel); err != nil {
			return err
		} else if skip && rel != "Dockerfile" {
			if d.IsDir() && !ignore.Exclusions() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o755, ModTime: epoch})
		case info.Mode().IsRegular():
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			hdr := &tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: int64(info.Mode().Perm()), Size: info.Size(), ModTime: epoch}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			_, err = io.Copy(tw, f)
			return err
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: rel, Linkname: link, ModTime: epoch})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("packing build context %s: %w", dir, err)
	}
	if err := addCACerts(tw, caBundle); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf, nil
}

func readIgnore(dir string) (*patternmatcher.PatternMatcher, error) {
	f, err := os.Open(filepath.Join(dir, ".dockerignore"))
	if os.IsNotExist(err) {
		return patternmatcher.New(nil)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%s/.dockerignore: %w", dir, err)
	}
	return patternmatcher.New(patterns)
}

// addCACerts splits a PEM bundle into one file per certificate: update-ca-certificates and Java's
// keystore hook read one certificate per file.
func addCACerts(tw *tar.Writer, bundle string) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: CACertsDir + "/", Mode: 0o755, ModTime: epoch}); err != nil {
		return err
	}
	if bundle == "" {
		return nil
	}
	data, err := os.ReadFile(bundle)
	if err != nil {
		return fmt.Errorf("CA bundle: %w (set IOTBENCH_CA_BUNDLE to your trusted certificates, or to an empty value for none)", err)
	}
	n := 0
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		n++
		cert := pem.EncodeToMemory(block)
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("%s/%03d.crt", CACertsDir, n), Mode: 0o644, Size: int64(len(cert)), ModTime: epoch}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(cert); err != nil {
			return err
		}
	}
	if n == 0 {
		return fmt.Errorf("CA bundle %s holds no PEM certificate", bundle)
	}
	return nil
}
