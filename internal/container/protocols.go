package container

import (
	"context"
	"fmt"
	"strings"

	"github.com/iotbench/iotbench/internal/tlscert"
)

// LabelProtocols is the image label by which a target declares the protocols it serves
// (tlscert.Protocols, separated by spaces), set in its Dockerfile. An image without it serves
// HTTP/1.1 in clear text alone.
const LabelProtocols = Label + ".protocols"

// Offerer is a Lifecycle that can read which protocols an image declares.
type Offerer interface {
	Protocols(ctx context.Context, image string) ([]string, error)
}

var _ Offerer = (*Docker)(nil)

// Protocols reads image's LabelProtocols.
func (d *Docker) Protocols(ctx context.Context, image string) ([]string, error) {
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
func ParseProtocols(label string) ([]string, error) {
	ps := strings.Fields(label)
	if len(ps) == 0 {
		return []string{tlscert.HTTP1}, nil
	}
	for _, p := range ps {
		if err := tlscert.Check(p); err != nil {
			return nil, fmt.Errorf("label %s=%q: %w", LabelProtocols, label, err)
		}
	}
	return ps, nil
}
