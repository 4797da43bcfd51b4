package container

import (
	"context"
	"io"
)

// Running is the Lifecycle of a service that already listens on loopback (iotbench run --url):
// nothing to build, start or remove. A Spec's Service, when set, is the service's base URL
// (a paired run's baseline and candidate are two services); BaseURL otherwise.
type Running struct {
	BaseURL string
}

var _ Lifecycle = Running{}

func (Running) Build(context.Context, BuildSpec, io.Writer) (string, error) { return "", nil }

func (r Running) Start(_ context.Context, s Spec) (Instance, error) {
	if s.Service != "" {
		r.BaseURL = s.Service
	}
	return runningInstance(r), nil
}

type runningInstance Running

func (i runningInstance) URL() string  { return i.BaseURL }
func (runningInstance) Health() []byte { return nil }
func (runningInstance) Logs(context.Context, int) string {
	return "(a service iotbench did not start: no log)"
}
func (runningInstance) Remove(context.Context) error { return nil }
