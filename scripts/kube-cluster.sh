#!/usr/bin/env bash
# A two-node Kubernetes v1.34.4 cluster on this machine, for iotbench's tests (issue 59, item 2).
# Built from the Go module proxy (tools/kube/go.mod) and Debian's packages; no registry, no kubeadm.
#
#   scripts/kube-cluster.sh build            pinned binaries + pause image into the cache (reused)
#   scripts/kube-cluster.sh up               tear down leftovers, start everything, wait for Ready
#   scripts/kube-cluster.sh down             stop everything, undo every change
#   scripts/kube-cluster.sh leftovers        list what a run left; non-zero if anything
#   scripts/kube-cluster.sh load-image IMG…  docker save IMG | import into both nodes' containerds
#   scripts/kube-cluster.sh smoke            Guaranteed pod on the target node, pinned, via a Service
#   scripts/kube-cluster.sh env              print KUBECONFIG=… for eval
#   scripts/kube-cluster.sh status           its processes and their resident memory
#   scripts/kube-cluster.sh kubectl ARGS…    the pinned kubectl, on this cluster
#
# Everything it creates lives under $IOTBENCH_KUBE_STATE (default /var/lib/iotbench-kube) and
# /run/iotbench-kube, on a bridge device of its own (iotk-host, 10.255.0.0/24: the API server and the
# nodes' addresses), the CNI bridges iotk-cni0/1 (pods 10.244.0.0/24, 10.244.1.0/24), cgroups
# /iotk-target and /iotk-generator, and KUBE-/CNI- iptables chains. Traffic stays on this machine.
set -euo pipefail

K8S_VERSION=v1.34.4
COREDNS_VERSION=v1.14.0
ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MOD_DIR=$ROOT_DIR/tools/kube
CACHE=${IOTBENCH_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iotbench/kube/$K8S_VERSION}
BIN=$CACHE/bin
STATE=${IOTBENCH_KUBE_STATE:-/var/lib/iotbench-kube}
RUN=/run/iotbench-kube
GO=${GO:-go}

log() { printf '%s kube-cluster: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || die "must run as root"; }

# ---------------------------------------------------------------------------------------- build
K8S_CMDS="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"

apt_install() { # only what is missing; apt-get update once if a package is unknown
  local missing=() p
  for p in "$@"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
}

ensure_debs() {
  need_root
  apt_install containerd containernetworking-plugins openssl iptables gcc libc6-dev curl
  # etcd without its init script: the package's files only, unpacked into the cache.
  if [ ! -x "$CACHE/etcd/usr/bin/etcd" ]; then
    local tmp; tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download etcd-server >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get download etcd-server >/dev/null; })
    rm -rf "$CACHE/etcd" && mkdir -p "$CACHE/etcd" && dpkg-deb -x "$tmp"/etcd-server_*.deb "$CACHE/etcd"
    rm -rf "$tmp"
  fi
}

# The version the binaries report (hack/lib/version.sh sets these from git; a module build has no git).
K8S_LDFLAGS="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1
 -X k8s.io/component-base/version.gitMinor=34 -X k8s.io/component-base/version.gitTreeState=clean
 -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1
 -X k8s.io/client-go/pkg/version.gitMinor=34 -X k8s.io/client-go/pkg/version.gitTreeState=clean"
K8S_LDFLAGS=$(echo $K8S_LDFLAGS)

build_k8s() {
  local c missing=()
  # binaries built with other flags (an older script) are rebuilt
  [ "$(cat "$BIN/.ldflags" 2>/dev/null)" = "$K8S_LDFLAGS" ] || rm -f "$BIN/.ldflags"
  for c in $K8S_CMDS; do [ -x "$BIN/$c" ] && [ -f "$BIN/.ldflags" ] || missing+=("$c"); done
  if [ ${#missing[@]} -gt 0 ]; then
    log "building ${missing[*]} ($K8S_VERSION) into $BIN"
    local pkgs=() t0=$SECONDS
    for c in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
    mkdir -p "$BIN"
    (cd "$MOD_DIR" && CGO_ENABLED=0 "$GO" build -trimpath -ldflags "$K8S_LDFLAGS" -o "$BIN/" "${pkgs[@]}")
    echo "$K8S_LDFLAGS" > "$BIN/.ldflags"
    log "built in $((SECONDS - t0)) s"
  fi
  if [ ! -x "$BIN/coredns" ]; then
    log "building coredns $COREDNS_VERSION"
    local t0=$SECONDS
    (cd /tmp && CGO_ENABLED=0 GOBIN="$BIN" GOFLAGS= "$GO" install -trimpath "github.com/coredns/coredns@$COREDNS_VERSION")
    log "built in $((SECONDS - t0)) s"
  fi
}

# The pause image: pause.c from the kubernetes module zip, static, as an OCI archive, under a local
# name (no registry's: nothing is pulled; containerd's sandbox_image names it).
PAUSE_IMAGE=localhost/iotbench-pause:3.10.1
build_pause() {
  [ -s "$CACHE/pause.oci.tar" ] && tar -xOf "$CACHE/pause.oci.tar" index.json | grep -q "\"$PAUSE_IMAGE\"" && return 0
  local dir src t
  dir=$(cd "$MOD_DIR" && "$GO" list -m -f '{{.Dir}}' k8s.io/kubernetes 2>/dev/null) ||
    dir=$(cd "$MOD_DIR" && GOFLAGS=-mod=mod "$GO" mod download -json k8s.io/kubernetes | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  src=$dir/build/pause/linux/pause.c
  [ -f "$src" ] || die "no $src in the module zip"
  t=$(mktemp -d)
  mkdir -p "$t/rootfs" "$t/oci/blobs/sha256"
  gcc -Os -Wall -Werror -static -DVERSION=v3.10.1-iotbench -o "$t/rootfs/pause" "$src"
  strip "$t/rootfs/pause"
  tar --numeric-owner --owner=0 --group=0 --mtime=@0 -C "$t/rootfs" -cf "$t/layer.tar" pause
  local ldig lsz cdig csz mdig msz
  ldig=$(sha256sum "$t/layer.tar" | cut -d' ' -f1); lsz=$(stat -c %s "$t/layer.tar")
  mv "$t/layer.tar" "$t/oci/blobs/sha256/$ldig"
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created_by":"iotbench kube-cluster.sh: pause.c of k8s.io/kubernetes %s"}]}' "$ldig" "$K8S_VERSION" > "$t/config.json"
  cdig=$(sha256sum "$t/config.json" | cut -d' ' -f1); csz=$(stat -c %s "$t/config.json")
  mv "$t/config.json" "$t/oci/blobs/sha256/$cdig"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' "$cdig" "$csz" "$ldig" "$lsz" > "$t/manifest.json"
  mdig=$(sha256sum "$t/manifest.json" | cut -d' ' -f1); msz=$(stat -c %s "$t/manifest.json")
  mv "$t/manifest.json" "$t/oci/blobs/sha256/$mdig"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' "$mdig" "$msz" "$PAUSE_IMAGE" "${PAUSE_IMAGE##*:}" > "$t/oci/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' > "$t/oci/oci-layout"
  mkdir -p "$CACHE"
  tar --numeric-owner --owner=0 --group=0 -C "$t/oci" -cf "$CACHE/pause.oci.tar.tmp" oci-layout index.json blobs
  mv "$CACHE/pause.oci.tar.tmp" "$CACHE/pause.oci.tar"
  rm -rf "$t"
  log "pause image $PAUSE_IMAGE -> $CACHE/pause.oci.tar"
}

cmd_build() {
  local t0=$SECONDS
  ensure_debs
  build_k8s
  build_pause
  log "build ready in $((SECONDS - t0)) s: $BIN"
}

# ------------------------------------------------------------------------------------- topology
HOST_BR=iotk-host            # a bridge device of ours carrying the cluster's host addresses
API_IP=10.255.0.1
NODES="target generator"
node_ip()    { case $1 in target) echo 10.255.0.1 ;; generator) echo 10.255.0.2 ;; esac; }
node_idx()   { case $1 in target) echo 0 ;; generator) echo 1 ;; esac; }
node_name()  { echo "iotk-$1"; }
SERVICE_CIDR=10.96.0.0/16
CLUSTER_CIDR=10.244.0.0/16
DNS_IP=10.96.0.10
ETCD_PORT=23790
KUBECONFIG_ADMIN=$STATE/admin.kubeconfig
CGROUP_ROOTS="iotk-target iotk-generator"
# The sysctls the kubelet (and kube-proxy, in some settings) may change: recorded at up, restored at down.
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys
kernel.keys.root_maxbytes net.ipv4.conf.all.route_localnet net.ipv4.ip_forward
net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables net.netfilter.nf_conntrack_max
net.netfilter.nf_conntrack_tcp_timeout_established net.netfilter.nf_conntrack_tcp_timeout_close_wait"
# Host paths a kubelet or CNI creates outside our own dirs; removed at down only if up found them absent.
HOST_PATHS="/var/lib/cni /var/log/containers /var/log/pods /run/containerd /run/containerd/runc /etc/cni /opt/cni
/var/lib/kubelet /usr/libexec/kubernetes"
BASELINE=$CACHE/host-baseline   # what the host had before our first up: compared by leftovers

kubectl_() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# --------------------------------------------------------------------------------- certificates
pki() { # name subject [extensions]
  local name=$1 subj=$2 ext=${3:-}
  local d=$STATE/pki
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/$name.key" 2>/dev/null
  openssl req -new -key "$d/$name.key" -subj "$subj" -out "$d/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$ext" ]; then echo "extendedKeyUsage=serverAuth,clientAuth"; echo "subjectAltName=$ext"
    else echo "extendedKeyUsage=clientAuth"; fi
  } > "$d/$name.ext"
  openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 30 \
    -extfile "$d/$name.ext" -out "$d/$name.crt" 2>/dev/null
  rm -f "$d/$name.csr" "$d/$name.ext"
}

kubeconfig() { # file name server
  local f=$1 name=$2 server=${3:-https://$API_IP:6443} d=$STATE/pki
  cat > "$f" <<KC
apiVersion: v1
kind: Config
clusters:
- name: iotbench-kube
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 < "$d/ca.crt")
users:
- name: $name
  user:
    client-certificate-data: $(base64 -w0 < "$d/$name.crt")
    client-key-data: $(base64 -w0 < "$d/$name.key")
contexts:
- name: iotbench-kube
  context: {cluster: iotbench-kube, user: $name}
current-context: iotbench-kube
KC
  chmod 600 "$f"
}

make_pki() {
  local d=$STATE/pki n
  mkdir -p "$d" && chmod 700 "$d"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$d/ca.key" -subj "/CN=iotbench-kube-ca" -days 30 -out "$d/ca.crt" 2>/dev/null
  pki apiserver "/CN=kube-apiserver" "IP:$API_IP,IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  pki apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  pki admin "/O=system:masters/CN=iotbench-admin"
  pki controller-manager "/CN=system:kube-controller-manager"
  pki scheduler "/CN=system:kube-scheduler"
  pki kube-proxy "/CN=system:kube-proxy"
  pki coredns "/CN=iotbench:coredns"
  for n in $NODES; do
    pki "kubelet-$n" "/O=system:nodes/CN=system:node:$(node_name "$n")"
    pki "kubelet-$n-serving" "/CN=$(node_name "$n")" "IP:$(node_ip "$n"),DNS:$(node_name "$n")"
    kubeconfig "$STATE/kubelet-$n.kubeconfig" "kubelet-$n"
  done
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/sa.key" 2>/dev/null
  openssl pkey -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
  kubeconfig "$KUBECONFIG_ADMIN" admin
  kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager
  kubeconfig "$STATE/scheduler.kubeconfig" scheduler
  kubeconfig "$STATE/kube-proxy.kubeconfig" kube-proxy
  kubeconfig "$STATE/coredns.kubeconfig" coredns
}

# ------------------------------------------------------------------------------------ processes
start() { # name cmd... : in its own session, logs in $STATE/logs/name.log, pid in $STATE/pids
  local name=$1; shift
  setsid "$@" > "$STATE/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$STATE/pids/$name.pid"
}

alive() { local p; p=$(cat "$STATE/pids/$1.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null; }

# The pid from a pid file, only while that process still runs a binary of ours.
our_pid() {
  local f=$1 p exe
  p=$(cat "$f" 2>/dev/null) || return 1
  [ -n "$p" ] && exe=$(readlink "/proc/$p/exe" 2>/dev/null) || return 1
  case "$exe" in "$BIN"/*|"$CACHE"/*|/usr/bin/containerd*) echo "$p" ;; *) return 1 ;; esac
}

stop_pids() { # pidfile... : TERM, then KILL after 10 s
  local f p pids=()
  for f in "$@"; do p=$(our_pid "$f") && { kill -TERM "$p" 2>/dev/null || true; pids+=("$p"); }; done
  [ ${#pids[@]} -eq 0 ] && return 0
  local i
  for i in $(seq 100); do
    local left=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
    [ $left = 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -f "$@"
}

wait_for() { # what timeout-seconds logname cmd...
  local what=$1 t=$2 name=$3; shift 3
  local end=$((SECONDS + t))
  until "$@" >/dev/null 2>&1; do
    if [ -n "$name" ] && ! alive "$name"; then
      tail -n 15 "$STATE/logs/$name.log" >&2 || true
      die "$name exited while waiting for $what: see $STATE/logs/$name.log"
    fi
    [ $SECONDS -lt $end ] || { [ -n "$name" ] && tail -n 15 "$STATE/logs/$name.log" >&2; die "timed out after ${t}s waiting for $what${name:+: see $STATE/logs/$name.log}"; }
    sleep 0.2
  done
}

# ------------------------------------------------------------------------------------- cgroups
cgroup_mounts() { awk '$3 ~ /^cgroup2?$/ {print $2}' /proc/mounts; }
v1_mounts() { awk '$3 == "cgroup" {print $2}' /proc/mounts; }  # named (systemd) ones too: the kubelet checks them

make_cgroups() {
  local m r
  for r in $CGROUP_ROOTS; do
    for m in $(v1_mounts); do
      mkdir -p "$m/$r"
      if [ -f "$m/cpuset.cpus" ]; then
        cat "$m/cpuset.cpus" > "$m/$r/cpuset.cpus"; cat "$m/cpuset.mems" > "$m/$r/cpuset.mems"
      fi
    done
  done
}

remove_cgroups() { # kills whatever still runs in them (pods of ours), then removes them deepest first
  local m r d p try
  for try in 1 2 3 4 5; do
    local left=0
    for m in $(cgroup_mounts); do for r in $CGROUP_ROOTS; do
      [ -d "$m/$r" ] || continue
      for p in $(cat $(find "$m/$r" -name cgroup.procs 2>/dev/null) 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
      while read -r d; do rmdir "$d" 2>/dev/null || left=1; done < <(find "$m/$r" -depth -type d 2>/dev/null)
    done; done
    [ $left = 0 ] && return 0
    sleep 0.5
  done
  log "warning: some cgroups could not be removed"
}

# ------------------------------------------------------------------------------------- network
make_network() {
  ip link add "$HOST_BR" type bridge
  ip addr add "10.255.0.1/24" dev "$HOST_BR"
  ip addr add "10.255.0.2/24" dev "$HOST_BR"
  ip link set "$HOST_BR" up
  # Service and pod addresses never follow the default route, even before kube-proxy or CNI have
  # programmed them: unmatched, they end on this portless bridge instead of leaving the machine.
  ip route add "$SERVICE_CIDR" dev "$HOST_BR" src "$API_IP"
  ip route add "$CLUSTER_CIDR" dev "$HOST_BR" src "$API_IP"
  # Pods reach each other, the host and Services, never another address: CNI's firewall plugin
  # jumps to CNI-ADMIN before accepting pod traffic in FORWARD, so the rule waits there.
  iptables -w -N CNI-ADMIN
  iptables -w -A CNI-ADMIN -i iotk-cni+ ! -o iotk-cni+ -j DROP
}

cni_conf() { # node
  local n=$1 i; i=$(node_idx "$n")
  mkdir -p "$STATE/containerd-$n/cni"
  cat > "$STATE/containerd-$n/cni/10-iotbench.conflist" <<CNI
{
  "cniVersion": "1.0.0",
  "name": "iotk-$n",
  "plugins": [
    {"type": "bridge", "bridge": "iotk-cni$i", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$STATE/cni-ipam",
              "ranges": [[{"subnet": "10.244.$i.0/24", "gateway": "10.244.$i.1"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "firewall", "backend": "iptables"},
    {"type": "loopback"}
  ]
}
CNI
}

# ----------------------------------------------------------------------------------- containerd
containerd_sock() { echo "$RUN/containerd-$1/containerd.sock"; }

start_containerd() { # node
  local n=$1 c=$STATE/containerd-$n
  mkdir -p "$c/root" "$c/opt" "$RUN/containerd-$n"
  cni_conf "$n"
  cat > "$c/config.toml" <<TOML
version = 2
root = "$c/root"
state = "$RUN/containerd-$n"
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$(containerd_sock "$n")"
[ttrpc]
  address = "$(containerd_sock "$n").ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$c/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/containerd-$n/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$c/cni"
    max_conf_num = 1
TOML
  start "containerd-$n" /usr/bin/containerd --config "$c/config.toml"
}

ctr_() { local n=$1; shift; ctr -a "$(containerd_sock "$n")" -n k8s.io "$@"; }

# ---------------------------------------------------------------------------------- kubernetes
start_etcd() {
  mkdir -p "$STATE/etcd"
  start etcd "$CACHE/etcd/usr/bin/etcd" --name iotk --data-dir "$STATE/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 10))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 10))" \
    --initial-cluster "iotk=http://127.0.0.1:$((ETCD_PORT + 10))" --log-level warn
}

start_control_plane() {
  local p=$STATE/pki
  start kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --advertise-address "$API_IP" --bind-address "$API_IP" --secure-port 6443 \
    --service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged=true \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --client-ca-file "$p/ca.crt" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$p/ca.crt" --kubelet-preferred-address-types InternalIP,Hostname \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --profiling=false
}

# after the API server is ready (its RBAC bootstrap done), or they exit on a forbidden configmap
start_controllers() {
  local p=$STATE/pki
  start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$STATE/controller-manager.kubeconfig" --authorization-kubeconfig "$STATE/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --cluster-cidr "$CLUSTER_CIDR" --allocate-node-cidrs=false --profiling=false
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig "$STATE/scheduler.kubeconfig" --authorization-kubeconfig "$STATE/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --profiling=false
}

start_kubelet() { # node
  local n=$1 i k=$STATE/kubelet-$1 p=$STATE/pki cpu=""
  i=$(node_idx "$n")
  mkdir -p "$k/root" "$k/pod-logs" "$k/volume-plugins"
  [ "$n" = target ] && cpu='cpuManagerPolicy: static
reservedSystemCPUs: "0"'
  cat > "$k/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_ip "$n")
port: $((10250 + 10 * i))
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((10248 + 10 * i))
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $p/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $p/kubelet-$n-serving.crt
tlsPrivateKeyFile: $p/kubelet-$n-serving.key
cgroupDriver: cgroupfs
cgroupRoot: /iotk-$n
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
containerRuntimeEndpoint: unix://$(containerd_sock "$n")
clusterDNS: [$DNS_IP]
clusterDomain: cluster.local
resolvConf: ""
podLogsDir: $k/pod-logs
volumePluginDir: $k/volume-plugins
failSwapOn: false
oomScoreAdj: 0
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
$cpu
YAML
  start "kubelet-$n" "$BIN/kubelet" --config "$k/config.yaml" --kubeconfig "$STATE/kubelet-$n.kubeconfig" \
    --root-dir "$k/root" --hostname-override "$(node_name "$n")" --node-ip "$(node_ip "$n")" \
    --node-labels "iotbench.io/role=$n"
}

start_kube_proxy() {
  start kube-proxy "$BIN/kube-proxy" --kubeconfig "$STATE/kube-proxy.kubeconfig" \
    --hostname-override "$(node_name target)" --proxy-mode iptables --cluster-cidr "$CLUSTER_CIDR" \
    --iptables-localhost-nodeports=false --nodeport-addresses 10.255.0.0/24 --oom-score-adj 0 \
    --conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 \
    --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256
}

# CoreDNS on the host (no forward plugin: cluster names only, nothing leaves the machine), behind
# the kube-dns Service through an EndpointSlice of our own.
start_coredns() {
  cat > "$STATE/Corefile" <<CF
.:53 {
    bind $API_IP
    errors
    health 127.0.0.1:18080
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $STATE/coredns.kubeconfig iotbench-kube
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
}
CF
  kubectl_ apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "iotbench:coredns"}
rules:
- {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "iotbench:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "iotbench:coredns"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "iotbench:coredns"}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: kube-dns-host, namespace: kube-system, labels: {kubernetes.io/service-name: kube-dns}}
addressType: IPv4
ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
endpoints: [{addresses: ["$API_IP"], conditions: {ready: true}}]
YAML
  start coredns "$BIN/coredns" -conf "$STATE/Corefile"
}

# ------------------------------------------------------------------------------------ teardown
iptables_cmds() {
  local c
  for c in iptables ip6tables; do command -v "$c" >/dev/null && echo "$c"; done
  # legacy tables only when loaded (listing them would not load them)
  [ -s /proc/net/ip_tables_names ] && command -v iptables-legacy >/dev/null && echo iptables-legacy
  [ -s /proc/net/ip6_tables_names ] && command -v ip6tables-legacy >/dev/null && echo ip6tables-legacy
  return 0
}
save_cmd() { case $1 in *-legacy) echo "${1%-legacy}-legacy-save" ;; *) echo "$1-save" ;; esac; }
restore_cmd() { case $1 in *-legacy) echo "${1%-legacy}-legacy-restore" ;; *) echo "$1-restore" ;; esac; }

our_chains() { # cmd : "table chain" lines of KUBE-/CNI- chains
  local c=$1 t
  for t in filter nat mangle raw; do
    "$(save_cmd "$c")" -t "$t" 2>/dev/null | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\) .*/\1/p' | sed "s/^/$t /"
  done
}

remove_iptables() {
  local c t save script
  for c in $(iptables_cmds); do
    for t in filter nat mangle raw; do
      save=$("$(save_cmd "$c")" -t "$t" 2>/dev/null) || continue
      # rules elsewhere that jump to our chains, then our chains flushed, then deleted: one
      # transaction per table (iptables-restore), rule by rule only if that fails
      script=$(printf '%s\n' "$save" | grep -E '^-A [^ ]+ .*-j (KUBE|CNI)-' | grep -vE '^-A (KUBE|CNI)-' | sed 's/^-A /-D /' || true
               printf '%s\n' "$save" | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\) .*/-F \1/p'
               printf '%s\n' "$save" | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\) .*/-X \1/p')
      [ -n "$script" ] || continue
      printf '*%s\n%s\nCOMMIT\n' "$t" "$script" | "$(restore_cmd "$c")" -w --noflush 2>/dev/null && continue
      printf '%s\n' "$script" | while read -r line; do eval "$c -w -t $t $line" 2>/dev/null || true; done
    done
  done
}

our_mounts() { awk -v s="$STATE" -v r="$RUN" 'index($2, s"/") == 1 || $2 == s || index($2, r"/") == 1 || $2 == r {print $2}' /proc/mounts | sort -r; }

unmount_all() {
  local m i
  for i in 1 2 3; do
    for m in $(our_mounts); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
    [ -z "$(our_mounts)" ] && return 0
  done
}

# The shim sockets of our pods. containerd (1.6) puts every shim's socket in /run/containerd/s,
# whoever's containerd it is (Docker's too), named by the sha256 of its containerd's address,
# namespace and sandbox: so ours are known by name, from every sandbox our containerds logged
# starting (a killed shim's task directory goes, its socket stays); and recorded beside the
# cache, so that leftovers can check them once the state is gone.
SHIM_SOCKETS=$CACHE/shim-sockets
our_shim_sockets() {
  local d n
  { cat "$STATE"/logs/containerd-*.log 2>/dev/null |
    grep -o "$RUN/containerd-[a-z]*/io.containerd.runtime.v2.task/k8s.io/[0-9a-f]*" || true; } | sort -u | while read -r d; do
    n=${d#"$RUN"/containerd-}; n=${n%%/*}
    echo "/run/containerd/s/$(printf '%s' "$(containerd_sock "$n")/k8s.io/${d##*/}" | sha256sum | cut -c1-64)"
  done
  [ -f "$SHIM_SOCKETS" ] && cat "$SHIM_SOCKETS"
  return 0
}

# Processes of ours without a pid file of ours: the containerd shims (and their containers).
shim_pids() {
  local f
  for f in "$RUN"/containerd-*/io.containerd.runtime.v2.task/*/*/shim.pid "$RUN"/containerd-*/io.containerd.runtime.v2.task/*/*/init.pid; do
    [ -f "$f" ] && cat "$f" 2>/dev/null && echo
  done
  # and any process whose command line names our socket paths (a shim whose bundle is gone)
  grep -l -a -F "$RUN/containerd-" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3
}

teardown() {
  local n p
  [ -d "$STATE" ] || [ -d "$RUN" ] || [ -n "$(leftover_list 2>/dev/null)" ] || return 0
  mkdir -p "$CACHE"; our_shim_sockets | sort -u > "$SHIM_SOCKETS.new"; mv "$SHIM_SOCKETS.new" "$SHIM_SOCKETS"
  # Graceful first, so that the kubelets stop the pods and CNI releases their networks.
  if [ -f "$KUBECONFIG_ADMIN" ] && alive kube-apiserver && alive kubelet-target; then
    stop_pids "$STATE/pids/kube-controller-manager.pid" "$STATE/pids/kube-scheduler.pid"
    kubectl_ delete pods --all -A --grace-period=1 --wait=false --request-timeout=10s >/dev/null 2>&1 || true
    local end=$((SECONDS + 30))
    while [ $SECONDS -lt $end ] && [ -n "$(kubectl_ get pods -A -o name --request-timeout=5s 2>/dev/null)" ]; do sleep 0.5; done
  fi
  stop_pids "$STATE"/pids/kube-proxy.pid "$STATE"/pids/coredns.pid "$STATE"/pids/kubelet-*.pid \
    "$STATE"/pids/kube-controller-manager.pid "$STATE"/pids/kube-scheduler.pid
  for n in $NODES; do
    if alive "containerd-$n"; then
      for p in $(ctr_ "$n" tasks ls -q 2>/dev/null); do ctr_ "$n" tasks kill -s SIGKILL "$p" >/dev/null 2>&1 || true; done
      sleep 0.5
      for p in $(ctr_ "$n" tasks ls -q 2>/dev/null); do ctr_ "$n" tasks delete -f "$p" >/dev/null 2>&1 || true; done
    fi
  done
  stop_pids "$STATE"/pids/containerd-*.pid
  for p in $(shim_pids | sort -u); do
    [ "$p" != $$ ] && kill -KILL "$p" 2>/dev/null || true
  done
  stop_pids "$STATE/pids/kube-apiserver.pid" "$STATE/pids/etcd.pid"
  remove_cgroups
  unmount_all
  remove_iptables
  for n in $(ip -o link show 2>/dev/null | sed -n 's/^[0-9]*: \(iotk-[^:@]*\).*/\1/p'); do ip link del "$n" 2>/dev/null || true; done
  if [ -f "$STATE/sysctl.orig" ]; then
    while IFS='=' read -r k v; do
      [ -n "$k" ] && [ "$(sysctl -n "$k" 2>/dev/null)" != "$v" ] && sysctl -q -w "$k=$v" >/dev/null 2>&1 || true
    done < "$STATE/sysctl.orig"
  fi
  if [ -f "$STATE/created-paths" ]; then
    while read -r p; do [ -n "$p" ] && rm -rf "$p"; done < "$STATE/created-paths"
  fi
  # the sockets of the shims killed above (a shim stopped gracefully removes its own)
  while read -r p; do rm -f "$p"; [ ! -e "$p" ] || echo "$p"; done < "$SHIM_SOCKETS" > "$SHIM_SOCKETS.new"
  mv "$SHIM_SOCKETS.new" "$SHIM_SOCKETS"
  rm -rf "$RUN" "$STATE"
}

# What a run left on this host: one line each; empty when nothing.
leftover_list() {
  local f p c m r k v line
  for f in "$STATE"/pids/*.pid; do p=$(our_pid "$f") && echo "process $p ($(basename "$f" .pid))"; done
  for p in $(grep -l -a -F -e "$RUN/" -e "$STATE/" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
    [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
    [ -d "/proc/$p" ] && grep -qa kube-cluster.sh "/proc/$p/cmdline" 2>/dev/null && continue
    [ -d "/proc/$p" ] && echo "process $p: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-120)"
  done
  for p in $(pgrep -f "^$BIN/" 2>/dev/null); do echo "process $p: $(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-120)"; done
  for m in $(our_mounts); do echo "mount $m"; done
  for m in $(cgroup_mounts); do for r in $CGROUP_ROOTS; do [ -d "$m/$r" ] && echo "cgroup $m/$r"; done; done
  for c in $(iptables_cmds); do our_chains "$c" | sed "s/^/$c chain /"; done
  ip -o link show 2>/dev/null | sed -n 's/^[0-9]*: \(iotk-[^:@]*\).*/link \1/p'
  ls /var/run/netns 2>/dev/null | grep -E '^cni-' | sed 's/^/netns /' || true
  [ -e "$STATE" ] && echo "dir $STATE"
  [ -e "$RUN" ] && echo "dir $RUN"
  if [ -f "$BASELINE" ]; then
    while read -r line; do
      case $line in
        sysctl\ *) line=${line#sysctl }; k=${line%%=*}; v=${line#*=}
          [ "$(sysctl -n "$k" 2>/dev/null)" = "$v" ] || echo "sysctl $k=$(sysctl -n "$k" 2>/dev/null) (was $v)" ;;
        absent\ *) p=${line#absent }; [ -e "$p" ] && echo "path $p (absent before)" ;;
      esac
    done < "$BASELINE"
  fi
  for p in $(our_shim_sockets | sort -u); do [ -e "$p" ] && echo "shim socket $p"; done
  return 0
}

cmd_leftovers() {
  local l; l=$(leftover_list)
  if [ -n "$l" ]; then echo "$l"; log "leftovers found"; return 1; fi
  log "nothing left"
}

cmd_down() { need_root; local t0=$SECONDS; teardown; log "down in $((SECONDS - t0)) s"; cmd_leftovers; }

# ------------------------------------------------------------------------------------------ up
record_host() {
  local k p
  mkdir -p "$STATE/pids" "$STATE/logs" "$RUN"
  : > "$STATE/sysctl.orig"; : > "$STATE/created-paths"
  for k in $SYSCTLS; do v=$(sysctl -n "$k" 2>/dev/null) && echo "$k=$v" >> "$STATE/sysctl.orig"; done
  for p in $HOST_PATHS; do [ -e "$p" ] || echo "$p" >> "$STATE/created-paths"; done
  { sed 's/^/sysctl /' "$STATE/sysctl.orig"; sed 's/^/absent /' "$STATE/created-paths"; } > "$BASELINE"
}

api_ready() { kubectl_ get --raw /readyz --request-timeout=2s; }
nodes_ready() {
  local n s
  for n in $NODES; do
    s=$(kubectl_ get node "$(node_name "$n")" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' --request-timeout=2s 2>/dev/null)
    [ "$s" = True ] || return 1
  done
}

cmd_up() {
  need_root
  local t0=$SECONDS n
  cmd_build
  local tb=$SECONDS
  # KUBE-/CNI- chains without a state dir of ours belong to someone else: refuse rather than remove them.
  if [ ! -d "$STATE" ]; then
    for c in $(iptables_cmds); do [ -z "$(our_chains "$c")" ] || die "KUBE-/CNI- chains exist ($c) but no $STATE: another cluster on this host?"; done
  fi
  teardown
  [ -z "$(leftover_list)" ] || { leftover_list >&2; die "a previous run left the above; remove it first"; }
  record_host
  make_pki
  make_network
  make_cgroups
  start_etcd
  for n in $NODES; do start_containerd "$n"; done
  wait_for "etcd" 30 etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health"
  start_control_plane
  for n in $NODES; do
    wait_for "containerd-$n" 30 "containerd-$n" ctr_ "$n" version
    ctr_ "$n" images import --all-platforms "$CACHE/pause.oci.tar" >/dev/null
  done
  wait_for "the API server" 60 kube-apiserver api_ready
  start_controllers
  for n in $NODES; do start_kubelet "$n"; done
  start_kube_proxy
  start_coredns
  local end=$((SECONDS + 120)) ok=0
  while [ $SECONDS -lt $end ]; do
    nodes_ready && { ok=1; break; }
    for p in etcd kube-apiserver kube-controller-manager kube-scheduler containerd-target containerd-generator kubelet-target kubelet-generator kube-proxy coredns; do
      alive "$p" || { tail -n 15 "$STATE/logs/$p.log" >&2; die "$p exited: see $STATE/logs/$p.log"; }
    done
    sleep 0.3
  done
  [ $ok = 1 ] || { kubectl_ get nodes >&2 || true; die "nodes not Ready after 120 s: see $STATE/logs/kubelet-target.log and kubelet-generator.log"; }
  log "both nodes Ready $((SECONDS - tb)) s after bring-up started ($((SECONDS - t0)) s with the build check)"
  echo "$KUBECONFIG_ADMIN"
}

# ----------------------------------------------------------------------------------- load-image
cmd_load_image() {
  need_root
  [ $# -gt 0 ] || die "usage: $0 load-image IMAGE..."
  [ -d "$STATE" ] || die "the cluster is not up: $0 up"
  local n img tar pids=()
  # a file of its own: iotbench loads the images it builds side by side
  tar=$(mktemp "$STATE/load-image.XXXXXX.tar")
  for img in "$@"; do
    # saved once, imported into both nodes side by side
    docker save -o "$tar" "$img" || { rm -f "$tar"; die "docker save $img failed"; }
    pids=()
    for n in $NODES; do ctr_ "$n" images import "$tar" >/dev/null & pids+=($!); done
    for n in "${pids[@]}"; do wait "$n" || { rm -f "$tar"; die "import of $img failed"; }; done
    rm -f "$tar"
    log "loaded $img into both nodes"
  done
}

# ---------------------------------------------------------------------------------------- smoke
# A Guaranteed pod (one whole CPU) from a locally loaded image on the target node: Running, pinned
# (its cpuset is the CPU the static policy gave it, not the reserved CPU 0), answering through a
# Service's ClusterIP from the host and by name from CoreDNS; then deleted.
cmd_smoke() {
  need_root
  # js-fastify listens on $BIND_ADDRESS (healthsrv and pairsrv only on 127.0.0.1: unreachable in a pod)
  local img=${SMOKE_IMAGE:-iotbench/js-fastify:latest} ns=iotk-smoke t0 uid cid cpus ip
  nodes_ready || die "the cluster is not up: $0 up"
  cmd_load_image "$img"
  kubectl_ delete namespace "$ns" --ignore-not-found --timeout=60s >/dev/null
  kubectl_ create namespace "$ns" >/dev/null
  wait_for "the default service account" 30 "" kubectl_ -n "$ns" get serviceaccount default
  t0=$(date +%s.%N)
  kubectl_ -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: target, labels: {app: smoke}}
spec:
  nodeSelector: {iotbench.io/role: target}
  containers:
  - name: target
    image: $img
    imagePullPolicy: Never
    env: [{name: PORT, value: "8080"}, {name: BIND_ADDRESS, value: 0.0.0.0}]
    ports: [{containerPort: 8080}]
    resources:
      requests: {cpu: "1", memory: 512Mi}
      limits: {cpu: "1", memory: 512Mi}
    readinessProbe: {httpGet: {path: /health, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: target}
spec:
  selector: {app: smoke}
  ports: [{port: 80, targetPort: 8080}]
YAML
  kubectl_ -n "$ns" wait --for=condition=Ready pod/target --timeout=60s >/dev/null ||
    { kubectl_ -n "$ns" describe pod target | tail -20 >&2; die "smoke pod not Ready: see $STATE/logs/kubelet-target.log"; }
  log "pod Ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s on $(kubectl_ -n "$ns" get pod target -o jsonpath='{.spec.nodeName}'), QoS $(kubectl_ -n "$ns" get pod target -o jsonpath='{.status.qosClass}')"
  uid=$(kubectl_ -n "$ns" get pod target -o jsonpath='{.metadata.uid}')
  cid=$(kubectl_ -n "$ns" get pod target -o jsonpath='{.status.containerStatuses[0].containerID}'); cid=${cid#*://}
  cpus=$(cat /sys/fs/cgroup/cpuset/iotk-target/kubepods/pod"$uid"/"$cid"/cpuset.cpus 2>/dev/null) ||
    die "no cpuset cgroup for the container under /sys/fs/cgroup/cpuset/iotk-target/kubepods/pod$uid"
  log "container cpuset.cpus = $cpus"
  [ "$cpus" = 1 ] || die "the Guaranteed pod is not pinned to CPU 1 (cpuset $cpus)"
  ip=$(kubectl_ -n "$ns" get service target -o jsonpath='{.spec.clusterIP}')
  wait_for "the Service $ip:80" 20 "" curl -sf --max-time 2 "http://$ip/health"
  log "GET http://$ip/health (ClusterIP, from the host): $(curl -s --max-time 2 "http://$ip/health" | head -c 80)"
  local a; a=$(resolve_via_coredns "target.$ns.svc.cluster.local") || true
  [ "$a" = "$ip" ] && log "CoreDNS: target.$ns.svc.cluster.local -> $a" || log "warning: CoreDNS answered '$a' for target.$ns.svc.cluster.local"
  kubectl_ delete namespace "$ns" --timeout=60s >/dev/null
  log "smoke passed; namespace $ns deleted"
}

# A DNS query to the kube-dns Service from the host, without dig: the kubectl binary cannot, so a
# tiny UDP exchange with bash's /dev/udp is used (one read: one datagram).
resolve_via_coredns() {
  local name=$1 q="" label
  q='\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00'
  IFS=. read -ra parts <<< "$name"
  for label in "${parts[@]}"; do q+=$(printf '\\x%02x' ${#label})$label; done
  q+='\x00\x00\x01\x00\x01'
  exec 3<>/dev/udp/$DNS_IP/53 || return 1
  printf "$q" | dd bs=512 iflag=fullblock status=none >&3   # one write: printf alone writes in pieces
  local reply; reply=$(timeout 3 dd bs=512 count=1 status=none <&3 | od -An -tu1 -v | tr -s ' \n' ' ') || true
  exec 3>&-
  # the last four bytes of a single A answer are the address
  set -- $reply
  [ $# -ge 4 ] || return 1
  local n=$#; shift $((n - 4)); echo "$1.$2.$3.$4"
}

# Each process of the cluster with its resident memory, and the sum.
cmd_status() {
  local f p rss total=0
  for f in "$STATE"/pids/*.pid; do
    p=$(our_pid "$f") || { echo "$(basename "$f" .pid): not running"; continue; }
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status"); total=$((total + rss))
    printf '%-24s pid %-7s %6d MiB\n' "$(basename "$f" .pid)" "$p" $((rss / 1024))
  done
  for p in $(shim_pids | sort -u); do
    [ -r "/proc/$p/status" ] || continue
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status"); total=$((total + rss))
    printf '%-24s pid %-7s %6d MiB\n' "$(tr '\0' ' ' < "/proc/$p/cmdline" | cut -d' ' -f1 | xargs basename)" "$p" $((rss / 1024))
  done
  printf '%-24s %11s %6d MiB\n' total "" $((total / 1024))
}

cmd_env() { echo "export KUBECONFIG=$KUBECONFIG_ADMIN"; }

case "${1:-}" in
  build) cmd_build ;;
  up) cmd_up ;;
  down) cmd_down ;;
  leftovers) cmd_leftovers ;;
  load-image) shift; cmd_load_image "$@" ;;
  smoke) cmd_smoke ;;
  env) cmd_env ;;
  status) cmd_status ;;
  kubectl) shift; kubectl_ "$@" ;;
  *) die "usage: $0 build|up|down|leftovers|load-image IMAGE...|smoke|env|status|kubectl ARGS..." ;;
esac

