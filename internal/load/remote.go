package load

import "sync"

// remoteHost is the one address besides loopback that load may go to: the host of the remote
// Docker engine the run's targets are on (docs/scale.md). Empty: loopback only.
var remoteHost struct {
	sync.RWMutex
	addr string
}

// AllowRemoteHost lets RequireLoopback pass URLs on addr (an IP address) as well as loopback:
// set once a run's targets are on another host's engine, never to a host of the user's choosing.
func AllowRemoteHost(addr string) {
	remoteHost.Lock()
	defer remoteHost.Unlock()
	remoteHost.addr = addr
}

// RemoteHost is the address AllowRemoteHost set; empty: none.
func RemoteHost() string {
	remoteHost.RLock()
	defer remoteHost.RUnlock()
	return remoteHost.addr
}
