package container

import (
	"context"
	"fmt"
	"strings"

	"github.com/iotbench/iotbench/internal/protocol"
)

// LabelProtocols is the image label by which a target declares the protocols it serves
// (protocol.All, separated by spaces), set in its Dockerfile. An image without it serves
// HTTP/1.1 in clear text alone.
const LabelProtocols = Label + ".protocols"

// Offerer is a Lifecycle that can read which protocols an image declares.
type Offerer interface {
	Protocols(ctx context.Context, image string) ([]protocol.Protocol, error)
}

var _ Offerer = (*Docker)(nil)

// Protocols reads image's LabelProtocols.
func (d *Docker) Protocols(ctx context.Context, image string) ([]protocol.Protocol, error) {
	img, err := d.imageInspect(ctx, image)
	if err != nil {
		return nil, fmt.Errorf("reading the protocols image %s serves: %w", image, err)
	}
	var labels map[string]string
	if img.Config != nil {
		labels = img.Config.Labels
	}
	return ParseProtocols(labels[LabelProtocols])
}

// ParseProtocols reads a LabelProtocols value: HTTP1 when empty.
func ParseProtocols(label string) ([]protocol.Protocol, error) {
	names := strings.Fields(label)
	if len(names) == 0 {
		return []protocol.Protocol{protocol.HTTP1}, nil
	}
	ps := make([]protocol.Protocol, len(names))
	for i, name := range names {
		ps[i] = protocol.Protocol(name)
		if err := protocol.Check(ps[i]); err != nil {
			return nil, fmt.Errorf("label %s=%q: %w", LabelProtocols, label, err)
		}
	}
	return ps, nil
}
