package plan

import (
	"net/url"

	"github.com/iotbench/iotbench/internal/protocol"
)

// TargetURL is base (a target's http:// address) with p's scheme.
func TargetURL(base string, p protocol.Protocol) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.Scheme = p.Or().Scheme()
	return u.String()
}
