package scenario

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/docker/go-units"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/payload"
	"github.com/iotbench/iotbench/internal/safetext"
	"go.yaml.in/yaml/v3"
)

// Load reads, parses and validates a scenario file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v (pass the scenario matrix with --file)", path, err)
	}
	return Parse(path, data)
}

// Parse parses and validates the content of a scenario file; path names it in errors and anchors
// relative paths.
func Parse(path string, data []byte) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fileError(path, err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: the file is empty; it needs targets and scenarios (see docs/scenarios.md)", path)
	}
	root := doc.Content[0]
	if errs := checkKeys(root, reflect.TypeFor[File](), "the file"); len(errs) > 0 {
		return nil, located(path, errs)
	}
	f := &File{Path: path}
	if err := root.Decode(f); err != nil {
		return nil, fileError(path, err)
	}
	f.TargetOrder, f.ScenarioOrder = orderAndLines(root, f)
	if errs := f.validate(root); len(errs) > 0 {
		return nil, located(path, errs)
	}
	return f, nil
}

// lineError is a problem at one line of the file.
type lineError struct {
	line int
	msg  string
}

func (e lineError) Error() string { return e.msg }

func errorf(line int, format string, args ...any) lineError {
	return lineError{line, fmt.Sprintf(format, args...)}
}

func located(path string, errs []lineError) error {
	slices.SortStableFunc(errs, func(a, b lineError) int { return a.line - b.line })
	msgs := make([]error, len(errs))
	for i, e := range errs {
		// A message quotes the file (a value, a path): no control code of it reaches the terminal.
		msgs[i] = fmt.Errorf("%s:%d: %s", path, e.line, safetext.Terminal(e.msg))
	}
	return errors.Join(msgs...)
}

var (
	yamlLine      = regexp.MustCompile(`line (\d+): (.*)`)
	yamlWrongType = regexp.MustCompile("cannot unmarshal !!\\w+ `(.*)` into (.*)")
	typeNames     = map[string]string{
		"int":             "a whole number",
		"time.Duration":   "a duration (e.g. 30s, 500ms)",
		"string":          "a string",
		"[]string":        "a list of strings (e.g. [a, b])",
		"bool":            "true or false",
		"scenario.Warmup": "a duration (e.g. 10s, 0s for none), auto (until steady, at most " + load.DefaultWarmupMax.String() + ") or auto:DURATION (at most DURATION)",
	}
)

// friendly says what a yaml type error means in the file's terms.
func friendly(msg string) string {
	m := yamlWrongType.FindStringSubmatch(msg)
	if m == nil {
		return "YAML syntax: " + msg
	}
	want := typeNames[m[2]]
	if want == "" {
		want = m[2]
		if strings.HasPrefix(want, "map[") || strings.HasPrefix(want, "scenario.") {
			want = "a mapping of keys to values"
		}
	}
	return fmt.Sprintf("wrong type: %q should be %s", m[1], want)
}

// fileError rewrites yaml's "yaml: line 3: …" errors into "path:3: …".
func fileError(path string, err error) error {
	var te *yaml.TypeError
	var lines []string
	if errors.As(err, &te) {
		lines = te.Errors
	} else {
		lines = []string{err.Error()}
	}
	msgs := make([]error, len(lines))
	for i, l := range lines {
		l = safetext.Terminal(l)
		if m := yamlLine.FindStringSubmatch(l); m != nil {
			msgs[i] = fmt.Errorf("%s:%s: %s", path, m[1], friendly(m[2]))
		} else {
			msgs[i] = fmt.Errorf("%s: %s", path, strings.TrimPrefix(l, "yaml: "))
		}
	}
	return errors.Join(msgs...)
}

// checkKeys walks node against the yaml tags of t and reports every key t does not know.
func checkKeys(node *yaml.Node, t reflect.Type, where string) []lineError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		if node.Kind != yaml.MappingNode {
			return nil // the decoder reports the wrong type
		}
		fields := yamlFields(t)
		var errs []lineError
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				errs = append(errs, errorf(k.Line, "unknown key %q in %s (known keys: %s)", k.Value, where, strings.Join(slices.Sorted(maps.Keys(fields)), ", ")))
				continue
			}
			errs = append(errs, checkKeys(v, ft, fmt.Sprintf("%q of %s", k.Value, where))...)
		}
		return errs
	case reflect.Map:
		if node.Kind != yaml.MappingNode {
			return nil
		}
		var errs []lineError
		for i := 0; i+1 < len(node.Content); i += 2 {
			errs = append(errs, checkKeys(node.Content[i+1], t.Elem(), fmt.Sprintf("%q", node.Content[i].Value))...)
		}
		return errs
	case reflect.Slice:
		if node.Kind != yaml.SequenceNode {
			return nil
		}
		var errs []lineError
		for _, item := range node.Content {
			errs = append(errs, checkKeys(item, t.Elem(), where)...)
		}
		return errs
	}
	return nil
}

// yamlFields maps the yaml keys of struct t to their types, descending into inline structs.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
		case opts == "inline":
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
		case name != "":
			out[name] = f.Type
		}
	}
	return out
}

// orderAndLines records the file order of targets and scenarios, and the line of each.
func orderAndLines(root *yaml.Node, f *File) (targets, scenarios []string) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		section, body := root.Content[i].Value, root.Content[i+1]
		if body.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(body.Content); j += 2 {
			name, line := body.Content[j].Value, body.Content[j].Line
			switch section {
			case "targets":
				if t := f.Targets[name]; t != nil {
					t.Name, t.Line = name, line
					targets = append(targets, name)
				}
			case "scenarios":
				if s := f.Scenarios[name]; s != nil {
					s.Name, s.Line = name, line
					scenarios = append(scenarios, name)
				}
			}
		}
	}
	return targets, scenarios
}

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// lookup finds key in node, a mapping: its key and value nodes; nil when absent. A null value
// (key: ~) is absent, as the decoder leaves it unset.
func lookup(node *yaml.Node, key string) (k, v *yaml.Node) {
	if node == nil || node.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if v := node.Content[i+1]; node.Content[i].Value == key && v.ShortTag() != "!!null" {
			return node.Content[i], v
		}
	}
	return nil, nil
}

// keyNode is the value at path (keys of nested mappings) under node; nil when absent.
func keyNode(node *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		_, node = lookup(node, key)
	}
	return node
}

// keyLine is the line of the last key of path under node; 0 when absent.
func keyLine(node *yaml.Node, path ...string) int {
	if len(path) == 0 {
		return 0
	}
	k, _ := lookup(keyNode(node, path[:len(path)-1]...), path[len(path)-1])
	if k == nil {
		return 0
	}
	return k.Line
}

// itemLine is the line of item i of the list at path under node; fallback when there is none.
func itemLine(node *yaml.Node, i, fallback int, path ...string) int {
	if list := keyNode(node, path...); list != nil && list.Kind == yaml.SequenceNode && i < len(list.Content) {
		return list.Content[i].Line
	}
	return fallback
}

// resolve makes a path of the file relative to its folder; an absolute one stays as it is.
func resolve(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// settingKeys are the keys of Settings, which defaults and scenarios share.
var settingKeys = []string{"warmup", "duration", "trials", "cpus", "memory", "db", "db_cpus", "db_pool", "protocol", "tls_resumption", "h2_streams"}

// checkSettings checks the settings that node, a defaults or scenario mapping, gives, each at its
// line, and records those lines in s. what prefixes each message ("defaults", `scenario "s"`).
func checkSettings(s *Settings, node *yaml.Node, what string) []lineError {
	var errs []lineError
	s.Lines = map[string]int{}
	for _, key := range settingKeys {
		line := keyLine(node, key)
		if line == 0 {
			continue
		}
		s.Lines[key] = line
		var err error
		var value any
		switch key {
		case "cpus":
			value = s.CPUs
			_, err = cpuset.Parse(s.CPUs, cpuset.MaxCPUs)
		case "memory":
			value = s.Memory
			_, err = ParseMemory(s.Memory)
		case "db":
			value, err = s.DB, CheckDB(s.DB)
		case "db_cpus":
			value = s.DBCPUs
			_, err = cpuset.Parse(s.DBCPUs, cpuset.MaxCPUs)
		case "db_pool":
			value, err = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(s.DBPool)), ", "), "[]"), CheckPoolSizes(s.DBPool)
		}
		if err != nil {
			errs = append(errs, errorf(line, "%s: %s %v: %v", what, key, value, err))
		}
	}
	for _, e := range s.loadSpec().Problems() {
		errs = append(errs, errorf(s.Lines[string(e.Key)], "%s: %s %s: %v", what, e.Key, e.Value, e.Err))
	}
	return errs
}

// validator collects a file's errors, each at the line of the key it is about.
type validator struct {
	root *yaml.Node
	dir  string // the file's folder, which its paths are relative to
	errs []lineError
}

func (v *validator) add(line int, format string, args ...any) {
	v.errs = append(v.errs, errorf(line, format, args...))
}

// at is the line of the key at path, else fallback (the line of what the key belongs to).
func (v *validator) at(fallback int, path ...string) int {
	if line := keyLine(v.root, path...); line > 0 {
		return line
	}
	return fallback
}

// validate checks what the types cannot, fills in defaults, and resolves paths against the file.
// Each error is at the line of the key it is about, else of its target or scenario.
func (f *File) validate(root *yaml.Node) []lineError {
	v := &validator{root: root, dir: filepath.Dir(f.Path)}
	if len(f.Targets) == 0 {
		v.add(1, "no targets: add a \"targets:\" section (see docs/scenarios.md)")
	}
	if len(f.Scenarios) == 0 {
		v.add(1, "no scenarios: add a \"scenarios:\" section (see docs/scenarios.md)")
	}
	ports := map[int]string{}
	for _, name := range f.TargetOrder {
		v.target(f.Targets[name], ports)
	}
	v.errs = append(v.errs, checkSettings(&f.Defaults, keyNode(root, "defaults"), "defaults")...)
	// After validation Defaults is complete: what a run uses when a scenario sets nothing.
	f.Defaults = f.Defaults.merged(builtin)
	for _, name := range f.ScenarioOrder {
		sv := scenarioValidator{validator: v, s: f.Scenarios[name], what: fmt.Sprintf("scenario %q", name)}
		sv.scenario(f)
	}
	if f.DefaultScenario != "" && f.Scenarios[f.DefaultScenario] == nil {
		v.add(v.at(1, "default_scenario"), "default_scenario %q is not a scenario of this file", f.DefaultScenario)
	}
	return v.errs
}

// target checks t and fills in its defaults; ports holds the targets checked before it by their
// port, which t must not share.
func (v *validator) target(t *Target, ports map[int]string) {
	name := t.Name
	key := func(k string) int { return v.at(t.Line, "targets", name, k) }
	if !validName.MatchString(name) {
		v.add(t.Line, "target name %q: use lower-case letters, digits, '.', '_' and '-'", name)
	}
	if t.Build == "" {
		v.add(t.Line, "target %q has no \"build\": give the folder holding its Dockerfile, e.g. targets/%s", name, name)
	} else {
		t.Build = resolve(v.dir, t.Build)
		if t.Dockerfile == "" {
			t.Dockerfile = "Dockerfile"
		}
		if _, err := os.Stat(filepath.Join(t.Build, t.Dockerfile)); err != nil {
			v.add(key("build"), "target %q: no %s in %s", name, t.Dockerfile, t.Build)
		}
	}
	switch other, taken := ports[t.Port]; {
	case t.Port < 1 || t.Port > 65535:
		v.add(key("port"), "target %q needs a \"port\" between 1 and 65535, distinct from the other targets'", name)
	case taken:
		v.add(key("port"), "target %q: port %d is already used by target %q; every target listens on its own port", name, t.Port, other)
	default:
		ports[t.Port] = name
	}
	if t.Health == "" {
		t.Health = defaultHealth
	}
	if !strings.HasPrefix(t.Health, "/") {
		v.add(key("health"), "target %q: health %q must be a path starting with /", name, t.Health)
	}
	if keyLine(v.root, "targets", name, "startup_timeout") > 0 {
		if err := loadspec.CheckWait(t.StartupTimeout); err != nil {
			v.add(key("startup_timeout"), "target %q: startup_timeout %s: %v", name, loadspec.FormatDuration(t.StartupTimeout), err)
		}
	}
	if t.StartupTimeout == 0 {
		t.StartupTimeout = defaultStartupTimeout
	}
	if t.Pool < 0 {
		v.add(key("pool"), "target %q: pool %d must not be negative (the threads that serve requests at once; leave it out for none)", name, t.Pool)
	}
}

// scenarioValidator checks one scenario, whose keys are under scenarios.NAME; what names it in
// each message.
type scenarioValidator struct {
	*validator
	s    *Scenario
	what string
}

// path is the path of the scenario's key at keys, from the file's root.
func (v scenarioValidator) path(keys []string) []string {
	return append([]string{"scenarios", v.s.Name}, keys...)
}

// key is the line of the scenario's key at path, else the scenario's.
func (v scenarioValidator) key(path ...string) int { return v.at(v.s.Line, v.path(path)...) }

// given says whether the file writes the scenario's key at path, which a zero value cannot tell.
func (v scenarioValidator) given(path ...string) bool { return keyLine(v.root, v.path(path)...) > 0 }

// scenario checks the scenario and completes it with the file's defaults (f.Defaults, complete by
// now) and its targets, which f must know.
func (v scenarioValidator) scenario(f *File) {
	s := v.s
	if !validName.MatchString(s.Name) {
		v.add(s.Line, "scenario name %q: use lower-case letters, digits, '.', '_' and '-'", s.Name)
	}
	v.errs = append(v.errs, checkSettings(&s.Settings, keyNode(v.root, "scenarios", s.Name), v.what)...)
	s.Settings = s.Settings.merged(f.Defaults)
	v.request()
	v.load()
	v.check()
	v.fits()
	if len(s.Targets) == 0 {
		v.add(v.key("targets"), "%s lists no targets: add \"targets: [name, …]\"", v.what)
	}
	for _, t := range s.Targets {
		if f.Targets[t] == nil {
			v.add(v.key("targets"), "%s: unknown target %q (known: %s)", v.what, t, strings.Join(f.TargetOrder, ", "))
		}
	}
}

// request checks the scenario's request, or its mix of requests, and completes it: the method
// upper-cased (GET when not given), the body resolved against the file, the payload sizes read.
func (v scenarioValidator) request() {
	s, what := v.s, v.what
	r := &s.Request
	if v.given("requests") {
		v.errs = append(v.errs, s.checkRequests(keyNode(v.root, "scenarios", s.Name), v.dir, what)...)
	}
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	r.Method = strings.ToUpper(r.Method)
	if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, r.Method) {
		v.add(v.key("request", "method"), "%s: method %q is not one of GET, POST, PUT, PATCH, DELETE", what, r.Method)
	}
	if !strings.HasPrefix(r.Path, "/") && !s.Mixed() {
		v.add(v.key("request", "path"), "%s needs request.path, a path starting with / (e.g. /ingest), or requests: (several)", what)
	}
	if r.BodyFile != "" {
		r.BodyFile = resolve(v.dir, r.BodyFile)
		if _, err := os.Stat(r.BodyFile); err != nil {
			v.add(v.key("request", "body_file"), "%s: request.body_file: %v", what, err)
		}
	}
	for _, e := range r.parseSizes(s.Memory) {
		v.add(v.key("request", "body_sizes"), "%s: %s", what, e)
	}
}

// load checks the scenario's load model, one of rate, stages and connections, with what paces it
// (think time, arrival process), each against loadspec's bounds, and parses its stages and think
// time; the expected latency and timeout not given are the defaults.
func (v scenarioValidator) load() {
	l := &v.s.Load
	if !v.given("load", "stages") && !v.given("load", "rate") && !v.given("load", "connections") {
		v.add(v.key("load"), "%s needs load.rate (requests per second, open loop), load.stages (open loop, rates over time) or load.connections (closed loop)", v.what)
	}
	if v.given("load", "stages") {
		v.stages()
	}
	if v.given("load", "think") {
		th, err := load.ParseThink(l.Think)
		if err != nil {
			v.add(v.key("load", "think"), "%s: load.think: %v", v.what, err)
		}
		l.Thinking = th
	}
	if !v.given("load", "expected_latency") {
		l.ExpectedLatency = loadspec.Defaults.ExpectedLatency
	}
	if !v.given("load", "timeout") {
		l.Timeout = loadspec.Defaults.Timeout
	}
	spec := v.s.LoadSpec()
	spec.Given = v.loadKeys()
	for _, e := range spec.Problems() {
		v.add(v.key("load", string(e.Key)), "%s: load.%s %s: %v", v.what, e.Key, e.Value, e.Err)
	}
}

// loadKeys are the keys of the scenario's load model that the file writes and that read: a
// stage or a think time that did not parse was reported by itself.
func (v scenarioValidator) loadKeys() []loadspec.Key {
	l := v.s.Load
	var keys []loadspec.Key
	for _, k := range loadspec.Keys {
		parsed := (k != loadspec.Stages || len(l.Staged) == len(l.Stages)) && (k != loadspec.Think || l.Thinking.Mean > 0)
		if v.given("load", string(k)) && parsed {
			keys = append(keys, k)
		}
	}
	return keys
}

// fits refuses the settings the scenario (or its defaults) gives that its load has no use for
// (loadspec's Misfits), each at the line it was written: of the scenario's load, else of its
// settings or the defaults'.
func (v scenarioValidator) fits() {
	spec := v.s.LoadSpec()
	spec.Given = v.loadKeys()
	for k := range v.s.Lines {
		spec.Give(loadspec.Key(k))
	}
	for _, e := range spec.Misfits(spec, v.s.Check.MinLatency) {
		if v.given("load", string(e.Key)) || e.Key == loadspec.Timeout {
			v.add(v.key("load", string(e.Key)), "%s: load.%s %s: %v", v.what, e.Key, e.Value, e.Err)
			continue
		}
		v.add(cmp.Or(v.s.Lines[string(e.Key)], v.s.Line), "%s: %s %s: %v", v.what, e.Key, e.Value, e.Err)
	}
}

// stages parses the scenario's load.stages, each at its item's line, then checks them as a whole
// once each one parsed.
func (v scenarioValidator) stages() {
	l, what := &v.s.Load, v.what
	for i, text := range l.Stages {
		st, err := load.ParseStage(text)
		if err != nil {
			v.add(itemLine(v.root, i, v.key("load", "stages"), v.path([]string{"load", "stages"})...), "%s: load.stages: %v", what, err)
			continue
		}
		l.Staged = append(l.Staged, st)
	}
}

// check checks what a good answer is; JSON fields imply a JSON content type.
func (v scenarioValidator) check() {
	c, what := &v.s.Check, v.what
	if c.MinLatency < 0 {
		v.add(v.key("check", "min_latency"), "%s: check.min_latency %s: must not be negative", what, loadspec.FormatDuration(c.MinLatency))
	}
	if len(c.JSONFields) > 0 {
		if c.ContentType == "" {
			c.ContentType = "application/json"
		} else if c.ContentType != "application/json" {
			v.add(v.key("check", "content_type"), "%s: check.json_fields needs a JSON answer, but check.content_type is %q; drop one of them", what, c.ContentType)
		}
	}
}

// parseSizes checks a payload sweep and fills r.Sizes; it returns what is wrong.
func (r *Request) parseSizes(memory string) []string {
	if len(r.BodySizes) == 0 {
		if r.PadField != "" {
			return []string{"request.pad_field is set but request.body_sizes is not: give the sizes to sweep (e.g. [16k, 256k])"}
		}
		return nil
	}
	if r.BodyFile == "" || r.PadField == "" {
		return []string{"request.body_sizes needs request.body_file (a JSON object) and request.pad_field (its string field that grows)"}
	}
	body, err := os.ReadFile(r.BodyFile)
	if err != nil {
		return nil // reported for body_file
	}
	var errs []string
	for _, text := range r.BodySizes {
		label := strings.ToLower(text)
		n, err := units.RAMInBytes(text)
		limit, memErr := ParseMemory(memory)
		switch {
		case err != nil || n <= 0 || !validName.MatchString(label):
			errs = append(errs, fmt.Sprintf("request.body_sizes: %q is not a size (e.g. 1536, 16k, 256k)", text))
			continue
		case n > MaxBodySize:
			errs = append(errs, fmt.Sprintf("request.body_sizes: %s is over %s, the largest body iotbench builds", text, units.BytesSize(MaxBodySize)))
			continue
		case memErr == nil && n >= limit:
			errs = append(errs, fmt.Sprintf("request.body_sizes: %s is not below the targets' memory limit %s: a target could not hold one request", text, memory))
			continue
		case slices.ContainsFunc(r.Sizes, func(s PayloadSize) bool { return s.Label == label }):
			errs = append(errs, fmt.Sprintf("request.body_sizes: %q is listed twice", text))
			continue
		}
		// Checked without building the body: a run pads it.
		if least, err := payload.MinSize(body, r.PadField); err != nil || int(n) < least {
			if err == nil {
				err = fmt.Errorf("%d bytes is smaller than the body itself (%d bytes)", n, least)
			}
			errs = append(errs, fmt.Sprintf("request.body_sizes: %s: %v", text, err))
			continue
		}
		r.Sizes = append(r.Sizes, PayloadSize{Label: label, Bytes: int(n)})
	}
	return errs
}
