// Package kube renders the Kubernetes layout of one cell (docs/scale.md): the target as a pod in
// the Guaranteed QoS class, which the kubelet's static CPU manager gives whole cores of its own,
// behind a Service; the generator as an indexed Job of shards, each measuring from one start
// time and leaving its result and interval log on a shared volume for `iotbench shard --merge`.
package kube

import (
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
	Env                 []env
	Command             []string
	Health              string
	Memory              int64
	Spec                string // the shards' spec, JSON
	Start               string
	Scenario            string
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
	e := []env{{"PORT", strconv.Itoa(c.Spec.Port)}, {"BIND_ADDRESS", "0.0.0.0"}}
	for _, k := range slices.Sorted(maps.Keys(c.Spec.Env)) {
		e = append(e, env{k, c.Spec.Env[k]})
	}
	v := view{
		Layout: l, Name: name, Target: c.Target, Image: l.Registry + c.Build.Tag(), Port: c.Spec.Port, Env: e,
		Command: c.Spec.Command, Health: c.Spec.Health, Memory: cmp.Or(c.Spec.Memory, defaultMemory), Spec: string(b),
		Start: l.Start.UTC().Truncate(time.Second).Format(time.RFC3339), Scenario: c.Scenario,
	}
	return manifests.Execute(w, v)
}

var manifests = template.Must(template.New("k8s").Funcs(template.FuncMap{
	"quote": strconv.Quote,
	"json": func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	},
}).Parse(strings.TrimLeft(`
# iotbench: scenario {{.Scenario}}, target {{.Target}}, {{.Generators}} generator shard(s), measured from {{.Start}}
# (docs/scale.md). Target nodes: kubelet --cpu-manager-policy=static, labelled iotbench/role=target;
# generator nodes labelled iotbench/role=generator. Merge: iotbench shard --merge <the claim's folder>.
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{.Name}}-shards
  namespace: {{.Namespace}}
data:
  spec.json: |
    {{.Spec}}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{.Name}}
  namespace: {{.Namespace}}
  labels: {app.kubernetes.io/name: iotbench-target, iotbench/target: {{.Target}}}
spec:
  restartPolicy: Never
  nodeSelector: {iotbench/role: target}
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
apiVersion: v1
kind: Service
metadata:
  name: {{.Name}}
  namespace: {{.Namespace}}
spec:
  selector: {iotbench/target: {{.Target}}}
  ports: [{port: {{.Port}}, targetPort: {{.Port}}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {{.Name}}-shards
  namespace: {{.Namespace}}
spec:
  completionMode: Indexed
  completions: {{.Generators}}
  parallelism: {{.Generators}}
  backoffLimit: 0
  template:
    metadata:
      labels: {app.kubernetes.io/name: iotbench-shard, iotbench/target: {{.Target}}}
    spec:
      restartPolicy: Never
      nodeSelector: {iotbench/role: generator}
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
        command: [iotbench, shard, --spec, /spec/spec.json, --index, $(JOB_COMPLETION_INDEX), --start, {{.Start}}, --out, /results]
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {cpu: "1", memory: 1Gi}
        volumeMounts:
        - {name: spec, mountPath: /spec}
        - {name: results, mountPath: /results}
      volumes:
      - name: spec
        configMap: {name: {{.Name}}-shards}
      - name: results
        persistentVolumeClaim: {claimName: {{.ResultsClaim}}}
`, "\n")))

// defaultMemory is the target's memory when its plan sets none: a Guaranteed pod needs one.
const defaultMemory = 1 << 30
