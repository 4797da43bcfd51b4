package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client speaks the Kubernetes API's REST over HTTP: what iotbench needs of it (create, read and
// delete objects, a container's log, an attach to its standard streams), not client-go's tree.
type Client struct {
	cfg  Config
	http *http.Client
}

// NewClient is a client of the API server cfg names.
func NewClient(cfg Config) *Client {
	tr := &http.Transport{TLSClientConfig: cfg.TLS, Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	return &Client{cfg: cfg, http: &http.Client{Transport: tr}}
}

// callTimeout bounds one call that is not a stream.
const callTimeout = 30 * time.Second

// StatusError is the API server's answer to a call that failed (its Status object).
type StatusError struct {
	Code    int
	Reason  string
	Message string
	// Call is the method and path called.
	Call string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: %d %s: %s", e.Call, e.Code, e.Reason, e.Message)
}

// NotFound says whether err is the API server's 404.
func NotFound(err error) bool {
	var s *StatusError
	return errors.As(err, &s) && s.Code == http.StatusNotFound
}

// Conflict says whether err is the API server's 409 (the object exists already).
func Conflict(err error) bool {
	var s *StatusError
	return errors.As(err, &s) && s.Code == http.StatusConflict
}

// Do calls method on path (with query) sending in as JSON (nil: no body) and decodes the answer
// into out (nil: discarded).
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.call(ctx, method, path, query, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	return nil
}

// Text is the body GET path answers (a container's log).
func (c *Client) Text(ctx context.Context, path string, query url.Values) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.call(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return string(b), err
}

// call sends the request; an answer other than 2xx is a *StatusError.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	u := c.cfg.Server + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.authorize(req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the Kubernetes API server of context %s: %w", c.cfg.Context, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, statusError(resp, method+" "+path)
}

func (c *Client) authorize(h http.Header) {
	if c.cfg.Token != "" {
		h.Set("Authorization", "Bearer "+c.cfg.Token)
	}
}

// statusError reads a failed answer's Status object (or its text when it is none).
func statusError(resp *http.Response, call string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var s struct{ Reason, Message string }
	if json.Unmarshal(b, &s) != nil || s.Message == "" {
		s.Message = strings.TrimSpace(string(b))
	}
	return &StatusError{Code: resp.StatusCode, Reason: s.Reason, Message: s.Message, Call: call}
}

// Object is a Kubernetes object as iotbench creates it: its JSON fields.
type Object = map[string]any

// Path is the REST path of kind's objects in namespace ns (empty: a cluster's object), and of
// the one called name when name is given.
func Path(kind, ns, name string) (string, error) {
	r, ok := kinds[kind]
	if !ok {
		return "", fmt.Errorf("no REST path known for kind %s", kind)
	}
	p := r.group
	if ns != "" && r.namespaced {
		p += "/namespaces/" + ns
	}
	p += "/" + r.plural
	if name != "" {
		p += "/" + name
	}
	return p, nil
}

var kinds = map[string]struct {
	group, plural string
	namespaced    bool
}{
	"Namespace": {"/api/v1", "namespaces", false},
	"Pod":       {"/api/v1", "pods", true},
	"Service":   {"/api/v1", "services", true},
	"Node":      {"/api/v1", "nodes", false},
	"Job":       {"/apis/batch/v1", "jobs", true},
}

// Create creates o (its kind and metadata.namespace say where).
func (c *Client) Create(ctx context.Context, o Object) error {
	kind, _ := o["kind"].(string)
	md, _ := o["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	p, err := Path(kind, ns, "")
	if err != nil {
		return err
	}
	return c.Do(ctx, http.MethodPost, p, nil, o, nil)
}

// Delete deletes kind's object name in ns, its dependents in the background; one already gone
// is no error.
func (c *Client) Delete(ctx context.Context, kind, ns, name string) error {
	p, err := Path(kind, ns, name)
	if err != nil {
		return err
	}
	err = c.Do(ctx, http.MethodDelete, p, nil, Object{"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}, nil)
	if NotFound(err) {
		return nil
	}
	return err
}

// Get reads kind's object name in ns into out.
func (c *Client) Get(ctx context.Context, kind, ns, name string, out any) error {
	p, err := Path(kind, ns, name)
	if err != nil {
		return err
	}
	return c.Do(ctx, http.MethodGet, p, nil, nil, out)
}

// List reads kind's objects in ns whose labels match selector into out (a list object).
func (c *Client) List(ctx context.Context, kind, ns, selector string, out any) error {
	p, err := Path(kind, ns, "")
	if err != nil {
		return err
	}
	q := url.Values{}
	if selector != "" {
		q.Set("labelSelector", selector)
	}
	return c.Do(ctx, http.MethodGet, p, q, nil, out)
}

// Logs are the last lines of container's output in pod name.
func (c *Client) Logs(ctx context.Context, ns, name, container string, lines int) (string, error) {
	p, _ := Path("Pod", ns, name)
	q := url.Values{"container": {container}, "tailLines": {fmt.Sprint(lines)}}
	return c.Text(ctx, p+"/log", q)
}
