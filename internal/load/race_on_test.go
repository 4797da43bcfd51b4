//go:build race

package load

// raceDetector: sync.Pool drops what is put back at random under -race, which crypto/tls's
// buffers come from, so allocations per request are not measured there.
const raceDetector = true
