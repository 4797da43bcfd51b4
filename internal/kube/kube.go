// Package kube renders the Kubernetes layout of one cell (docs/scale.md): the target as a pod in
// the Guaranteed QoS class, which the kubelet's static CPU manager gives whole cores of its own,
// behind a Service; the generator as an indexed Job of shards, each measuring from one start
// time and leaving its result and interval log on a shared volume for `iotbench shard --merge`.
package kube

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/shard"
)

// Layout is what Render needs besides the cell.
type Layout struct {
	Namespace string
	// Registry prefixes the images (the cluster pulls them from there), e.g. "registry.example/".
	Registry string
	// IotbenchImage runs the shards: an image holding the iotbench binary.
	IotbenchImage string
	Generators    int
	// TargetCPUs is the target's whole number of CPUs (its request and limit).
	TargetCPUs int
	// Start is when the shards' measured phase begins: they must be running and warm by then.
	Start time.Time
	// ResultsClaim is a ReadWriteMany PersistentVolumeClaim the shards write to.
	ResultsClaim string
}

type env struct{ Name, Value string }

type view struct {
	Layout
	Name, Target, Image string
	Port                int
	// SignalsPort, when set, is served by the Service too (docs/contract.md, "Signals").
	SignalsPort int
	Env         []env
	Command     []string
	Health      string
	Memory      int64
	Spec        string // the shards' spec, JSON
	Start       string
	Scenario    string
	JobName     string
	// TargetNode, when set, is the node the target's pod must run on.
	TargetNode string
}

// Render writes the cell's manifests: a ConfigMap with the shards' spec, the target's Pod and
// Service, and the shards' indexed Job.
func Render(w io.Writer, c plan.Cell, l Layout) error {
	if l.Generators < 1 || l.TargetCPUs < 1 {
		return fmt.Errorf("%d generators and %d target CPUs: at least one of each", l.Generators, l.TargetCPUs)
	}
	name := "iotbench-" + c.Target
	cfg := c.Load
	cfg.Request.URL = fmt.Sprintf("%s://%s:%d%s", cfg.Request.Protocol.Or().Scheme(), name, c.Spec.Port, c.Path)
	specs, err := shard.Split(cfg, l.Generators)
	if err != nil {
		return err
	}
	spec := specs[0]
	spec.Index = -1 // each pod's own: JOB_COMPLETION_INDEX
	spec.Load.Request.Remote = name
	b, err := json.MarshalIndent(spec, "    ", "  ")
	if err != nil {
		return err
	}
	v := targetView(c.Spec, l, l.Registry+c.Build.Tag())
	v.Spec = string(b)
	v.Start = l.Start.UTC().Truncate(time.Second).Format(time.RFC3339)
	v.Scenario = c.Scenario
	v.JobName = v.Name + "-shards"
	return manifests.Execute(w, v)
}

// targetView is what the target's Pod and Service are made of.
func targetView(s container.Spec, l Layout, image string) view {
	vars := s.Environment("0.0.0.0") // the pod's own network
	var e []env
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		e = append(e, env{k, vars[k]})
	}
	return view{
		Layout: l, Name: "iotbench-" + s.Target, Target: s.Target, Image: image, Port: s.Port, Env: e,
		Command: s.Command, Health: s.Health, Memory: cmp.Or(s.Memory, defaultMemory), SignalsPort: s.SignalsPort,
	}
}

// TargetObjects are the target's Pod and Service as Render writes them, for iotbench run --kube
// to create: s's target on l.TargetCPUs whole CPUs, of image.
func TargetObjects(s container.Spec, l Layout, image string) ([]Object, error) {
	return objects("target", targetView(s, l, image))
}

// ShardJob is the indexed Job of l.Generators shards, named name, that iotbench run --kube
// attaches to: each reads its spec and start from its standard input, as a shard process does.
func ShardJob(name, target string, l Layout) (Object, error) {
	l.ResultsClaim = ""
	o, err := objects("shards", view{Layout: l, Target: target, JobName: name})
	if err != nil {
		return nil, err
	}
	return o[0], nil
}

// objects executes template name and decodes the documents it writes.
func objects(name string, v view) ([]Object, error) {
	var b bytes.Buffer
	if err := manifests.ExecuteTemplate(&b, name, v); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(&b)
	var out []Object
	for {
		var o Object
		err := dec.Decode(&o)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("the %s manifests do not parse: %w", name, err)
		}
		if o != nil {
			out = append(out, o)
		}
	}
}

var manifests = template.Must(template.New("k8s").Funcs(template.FuncMap{
	"quote": strconv.Quote,
	"json": func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	},
}).Parse(strings.TrimLeft(`
# iotbench: scenario {{.Scenario}}, target {{.Target}}, {{.Generators}} generator shard(s), measured from {{.Start}}
# (docs/scale.md). Target nodes: kubelet --cpu-manager-policy=static, labelled iotbench.io/role=target;
# generator nodes labelled iotbench.io/role=generator. Merge: iotbench shard --merge <the claim's folder>.
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{.Name}}-shards
  namespace: {{.Namespace}}
data:
  spec.json: |
    {{.Spec}}
---
{{template "target" .}}
---
{{template "shards" .}}
{{- define "target" -}}
apiVersion: v1
kind: Pod
metadata:
  name: {{.Name}}
  namespace: {{.Namespace}}
  labels: {app.kubernetes.io/name: iotbench-target, iotbench.io/target: {{.Target}}, iotbench.io/instance: {{.Name}}}
spec:
  restartPolicy: Never
  nodeSelector: {iotbench.io/role: target{{if .TargetNode}}, kubernetes.io/hostname: {{.TargetNode}}{{end}}}
  terminationGracePeriodSeconds: 5
  containers:
  - name: target
    image: {{.Image}}
    imagePullPolicy: IfNotPresent
{{- if .Command}}
    command: {{json .Command}}
{{- end}}
    env:
{{- range .Env}}
    - {name: {{.Name}}, value: {{quote .Value}}}
{{- end}}
    ports: [{containerPort: {{.Port}}}]
    readinessProbe:
      httpGet: {path: {{.Health}}, port: {{.Port}}}
      periodSeconds: 1
    # Guaranteed QoS with whole CPUs: the static CPU manager gives the container cores of its own.
    resources:
      requests: {cpu: "{{.TargetCPUs}}", memory: "{{.Memory}}"}
      limits: {cpu: "{{.TargetCPUs}}", memory: "{{.Memory}}"}
    securityContext:
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
    volumeMounts: [{name: tmp, mountPath: /tmp}]
  volumes:
  - name: tmp
    emptyDir: {medium: Memory, sizeLimit: "{{.Memory}}"}
---
# A NodePort: iotbench reaches it from outside the cluster to check the target before load.
apiVersion: v1
kind: Service
metadata:
  name: {{.Name}}
  namespace: {{.Namespace}}
spec:
  type: NodePort
  selector: {iotbench.io/instance: {{.Name}}}
  ports:
  - {name: http, port: {{.Port}}, targetPort: {{.Port}}}
{{- if .SignalsPort}}
  - {name: signals, port: {{.SignalsPort}}, targetPort: {{.SignalsPort}}}
{{- end}}
{{- end}}
{{- define "shards" -}}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{.JobName}}
  namespace: {{.Namespace}}
spec:
  completionMode: Indexed
  completions: {{.Generators}}
  parallelism: {{.Generators}}
  backoffLimit: 0
  template:
    metadata:
      labels: {app.kubernetes.io/name: iotbench-shard{{if .Target}}, iotbench.io/target: {{.Target}}{{end}}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 5
      nodeSelector: {iotbench.io/role: generator}
      # One shard a node where there are as many: shards sharing a node share its CPUs.
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app.kubernetes.io/name: iotbench-shard}}
      containers:
      - name: shard
        image: {{.IotbenchImage}}
        imagePullPolicy: IfNotPresent
{{- if .ResultsClaim}}
        command: [iotbench, shard, --spec, /spec/spec.json, --index, $(JOB_COMPLETION_INDEX), --start, {{.Start}}, --out, /results]
{{- else}}
        # iotbench run --kube attaches: the shard reads its spec and start from its input.
        command: [iotbench, shard]
        stdin: true
        stdinOnce: true
{{- end}}
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {cpu: "1", memory: 1Gi}
{{- if .ResultsClaim}}
        volumeMounts:
        - {name: spec, mountPath: /spec}
        - {name: results, mountPath: /results}
      volumes:
      - name: spec
        configMap: {name: {{.Name}}-shards}
      - name: results
        persistentVolumeClaim: {claimName: {{.ResultsClaim}}}
{{- end}}
{{- end}}
`, "\n")))

// defaultMemory is the target's memory when its plan sets none: a Guaranteed pod needs one.
const defaultMemory = 1 << 30
