"""Checks rendered Kubernetes manifests (scripts/check-deploy.sh runs this).

For each rendered overlay:

1. every object validates, strictly (unknown fields are errors), against the
   Kubernetes OpenAPI schemas of the oldest and newest supported versions
   (kubernetes-validate); custom resources (ServiceMonitor, PrometheusRule)
   are validated against their CRD's schema by crd.mjs, and any other kind
   without a schema is an error rather than a silent pass (the alerts'
   content and the dashboard are ops_kit.py's);
2. the binaries accept what the manifests give them: each container runs
   `<binary> --check-config` with its args, its environment and its ConfigMap
   files materialised where the args point;
3. the objects fit together, using the effective settings and plan printed
   by `--check-config -o json`: listen addresses and ports against container ports,
   probes against the services' probe paths, Services, ServiceMonitor,
   NetworkPolicies, autoscaler and disruption budget against the workloads,
   in-cluster upstream URLs against the Service and path prefix they name
   (the metadata-helper's graph-data URL against the graph-builder's
   graph-data port), configured paths against volume mounts, the restricted Pod Security
   Standard, and the single graph-builder topology.

`--self-test` then breaks the first overlay in one way per check and fails
unless each break is reported, so every check is known to be able to fail.
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import urllib.parse

import kubernetes_validate
import yaml

# Oldest and newest Kubernetes the manifests must be valid for.
KUBERNETES_VERSIONS = ["1.25", "1.37"]

# Custom resources, validated by crd.mjs instead of kubernetes-validate.
CRD_KINDS = {("monitoring.coreos.com/v1", "ServiceMonitor"), ("monitoring.coreos.com/v1", "PrometheusRule")}

# What each service's container must look like. `ports` maps the container
# port names the manifests use to the effective setting that must equal them.
SERVICES = {
    "graph-builder": {
        "probes": {"livenessProbe": "/liveness", "readinessProbe": "/readiness"},
        "ports": {
            "graph": ("service", "port"),
            "graph-data": ("service", "public_port"),
            "status": ("status", "port"),
        },
        "api_port": "graph",
    },
    "policy-engine": {
        "probes": {"livenessProbe": "/livez", "readinessProbe": "/readyz"},
        "ports": {
            "http": ("service", "port"),
            "status": ("status", "port"),
        },
        "api_port": "http",
    },
    "metadata-helper": {
        "probes": {"livenessProbe": "/livez", "readinessProbe": "/readyz"},
        "ports": {
            "signatures": ("service", "port"),
            "status": ("status", "port"),
        },
        "api_port": "signatures",
    },
}


class Checker:
    def __init__(self, bin_dir, crd_models, verbose=False):
        self.bin_dir = bin_dir
        self.crd_models = crd_models
        self.verbose = verbose
        # Schema problems by object: the self-test re-checks mostly
        # unchanged objects, and schema validation is the slow part.
        self.schema_problems = {}
        # Set while the self-test checks broken copies.
        self.breaking = False

    # -- entry point -------------------------------------------------------

    def check(self, overlay, docs):
        """All problems found in one rendered overlay, as strings."""
        self.errors = []
        self.overlay = overlay
        self.docs = docs
        self.check_schemas()
        self.workloads = [d for d in docs if d.get("kind") == "Deployment"]
        for doc in docs:
            if doc.get("kind") in ("Pod", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"):
                self.error(doc, "only Deployments are checked; teach deploy/check/check.py this kind")
        self.containers = []  # (deployment, container, service name, effective settings)
        for deployment in self.workloads:
            self.check_pod_security(deployment)
            for container in pod_spec(deployment).get("containers", []):
                self.check_container(deployment, container)
        self.check_topology()
        self.check_services()
        self.check_service_monitors()
        self.check_autoscalers_and_budgets()
        self.check_network_policies()
        self.check_upstreams()
        self.check_graph_data_urls()
        return self.errors

    def error(self, doc, message):
        name = f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}" if doc else ""
        self.errors.append(f"{self.overlay}: {name}: {message}")

    # -- 1. schemas ----------------------------------------------------------

    def check_schemas(self):
        unknown = [d for d in self.docs if json.dumps(d, sort_keys=True) not in self.schema_problems]
        custom = [d for d in unknown if (d.get("apiVersion"), d.get("kind")) in CRD_KINDS]
        for doc, problem in zip(custom, self.custom_resource_problems(custom)):
            self.schema_problems[json.dumps(doc, sort_keys=True)] = problem
        for doc in unknown:
            if (doc.get("apiVersion"), doc.get("kind")) not in CRD_KINDS:
                self.schema_problems[json.dumps(doc, sort_keys=True)] = kubernetes_problem(doc)
        for doc in self.docs:
            problem = self.schema_problems[json.dumps(doc, sort_keys=True)]
            if problem:
                self.error(doc, problem)

    def custom_resource_problems(self, docs):
        if not docs:
            return []
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crd.mjs")
        result = subprocess.run(
            ["node", script, self.crd_models],
            input=json.dumps(docs),
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise SystemExit(f"crd.mjs failed: {result.stderr.strip()}")
        return [problem and f"CRD schema: {problem}" for problem in json.loads(result.stdout)]

    # -- 2. each container against its binary ----------------------------

    def check_container(self, deployment, container):
        image = container.get("image", "")
        service = image_name(image)
        if service not in SERVICES:
            self.error(deployment, f"container {container.get('name')}: image {image!r} is not one of {sorted(SERVICES)}")
            return
        spec = SERVICES[service]
        binary = os.path.join(self.bin_dir, service)
        if container.get("command") not in (None, [f"/usr/local/bin/{service}"]):
            self.error(deployment, f"command {container['command']} bypasses the image's entrypoint")
        env = {}
        for variable in container.get("env", []):
            if "value" not in variable:
                self.error(deployment, f"env {variable['name']}: only literal values can be checked")
                continue
            env[variable["name"]] = variable["value"]
        with tempfile.TemporaryDirectory() as root:
            mounts = self.materialise_config_maps(deployment, container, root)
            args = [rewrite_path(arg, mounts) for arg in container.get("args", [])]
            env = {name: rewrite_path(value, mounts) for name, value in env.items()}
            result = subprocess.run(
                [binary, "--check-config", "-o", "json", *args],
                env={"PATH": os.environ.get("PATH", ""), "HOME": root, **env},
                capture_output=True,
                text=True,
                timeout=60,
            )
            if result.returncode != 0:
                # anyhow repeats the error under "Caused by:"; once is enough.
                message = (result.stderr.strip() or result.stdout.strip()).split("\n\nCaused by:")[0]
                self.error(deployment, f"{service} --check-config {' '.join(args)} refused the configuration: {message}")
                return
            if self.verbose and not self.breaking:
                print(f"{self.overlay}: {deployment['metadata']['name']}: {service} accepted its configuration")
            settings = json.loads(result.stdout)
            config_file = config_file_of(args)
            toml_text = ""
            if config_file:
                with open(config_file) as file:
                    toml_text = file.read()
        self.check_listeners(deployment, container, service, settings)
        self.check_probes(deployment, container, spec)
        if service == "graph-builder":
            self.check_configured_paths(deployment, container, toml_text)
        if service == "metadata-helper":
            self.check_signature_paths(deployment, container, settings)
        if service == "policy-engine":
            self.check_fleet_paths(deployment, container, settings)
        self.containers.append((deployment, container, service, settings))

    def materialise_config_maps(self, deployment, container, root):
        """Writes the ConfigMaps the container mounts under `root`; returns
        {mount path: materialised path}."""
        volumes = {volume["name"]: volume for volume in pod_spec(deployment).get("volumes", [])}
        mounts = {}
        for mount in container.get("volumeMounts", []):
            volume = volumes.get(mount["name"])
            if volume is None:
                self.error(deployment, f"volumeMount {mount['name']} names no volume")
                continue
            if "configMap" not in volume:
                continue
            if "subPath" in mount or "items" in volume["configMap"]:
                self.error(deployment, f"volume {mount['name']}: subPath and items are not checked; teach check.py")
                continue
            config_map = self.find("ConfigMap", volume["configMap"]["name"], deployment)
            if config_map is None:
                if not volume["configMap"].get("optional"):
                    self.error(deployment, f"ConfigMap {volume['configMap']['name']} is not in the overlay")
                continue
            target = os.path.join(root, mount["mountPath"].lstrip("/"))
            os.makedirs(target, exist_ok=True)
            for key, text in (config_map.get("data") or {}).items():
                with open(os.path.join(target, key), "w") as file:
                    file.write(text)
            mounts[mount["mountPath"].rstrip("/")] = target
        return mounts

    def check_listeners(self, deployment, container, service, settings):
        ports = {port.get("name"): port["containerPort"] for port in container.get("ports", [])}
        expected = SERVICES[service]["ports"]
        if set(ports) != set(expected):
            self.error(deployment, f"container ports are named {sorted(ports)}, expected {sorted(expected)}")
        for name, (section, key) in expected.items():
            value = setting(settings, f"{section}.{key}")
            if value is None:
                self.error(deployment, f"{service} --check-config printed no {section}.{key}")
                continue
            if name in ports and str(ports[name]) != value:
                self.error(deployment, f"container port {name} is {ports[name]} but {service} listens on {section}.{key} = {value}")
        for section in ("service", "status"):
            address = setting(settings, f"{section}.address")
            if address not in ("0.0.0.0", "::"):
                self.error(deployment, f"{service} listens on {section}.address = {address}: unreachable from outside the pod")

    def check_probes(self, deployment, container, spec):
        ports = {port.get("name"): port["containerPort"] for port in container.get("ports", [])}
        for probe_name, path in spec["probes"].items():
            probe = container.get(probe_name)
            if not probe or "httpGet" not in probe:
                self.error(deployment, f"{probe_name} must be an httpGet of {path}")
                continue
            get = probe["httpGet"]
            if get.get("path") != path:
                self.error(deployment, f"{probe_name} path is {get.get('path')}, the service answers {path}")
            port = ports.get(get.get("port"), get.get("port"))
            if port != ports.get("status"):
                self.error(deployment, f"{probe_name} port {get.get('port')} is not the status port")

    def check_configured_paths(self, deployment, container, toml_text):
        """Paths in the graph-builder's configuration must be on volumes (the
        root filesystem is read-only), and the scrape cache on a writable one."""
        try:
            config = tomllib.loads(toml_text)
        except tomllib.TOMLDecodeError as error:
            self.error(deployment, f"configuration is not TOML: {error}")
            return
        volumes = {volume["name"]: volume for volume in pod_spec(deployment).get("volumes", [])}
        mounts = container.get("volumeMounts", [])
        for table in config.get("plugin_settings", []):
            for key, value in table.items():
                if not (isinstance(value, str) and value.startswith("/")):
                    continue
                if not (key.endswith(("_path", "_dir", "_directory")) or key == "path"):
                    continue
                mount = next((m for m in mounts if is_under(value, m["mountPath"])), None)
                if mount is None:
                    self.error(deployment, f"{table.get('name')}.{key} = {value} is on no volume mount")
                elif key == "cache_path":
                    volume = volumes.get(mount["name"], {})
                    if mount.get("readOnly") or "configMap" in volume or "secret" in volume:
                        self.error(deployment, f"{table.get('name')}.cache_path = {value} is on a read-only volume")

    def check_signature_paths(self, deployment, container, settings):
        """The metadata-helper's signature directory must be on a volume, its
        work directory (unpacked revisions) on a writable one."""
        mounts = container.get("volumeMounts", [])
        volumes = {volume["name"]: volume for volume in pod_spec(deployment).get("volumes", [])}
        for key, writable in (("dir", False), ("work_dir", True)):
            path = setting(settings, f"signatures.{key}")
            if path is None:
                continue
            mount = next((m for m in mounts if is_under(path, m["mountPath"])), None)
            if mount is None:
                self.error(deployment, f"signatures.{key} = {path} is on no volume mount")
                continue
            volume = volumes.get(mount["name"], {})
            if writable and (mount.get("readOnly") or "configMap" in volume or "secret" in volume):
                self.error(deployment, f"signatures.{key} = {path} is on a read-only volume")

    def check_fleet_paths(self, deployment, container, settings):
        """A SQLite fleet store must be on a writable volume (the root
        filesystem is read-only, and the fleet must outlive the pod); the
        store's password file and the id hash key on a volume."""
        mounts = container.get("volumeMounts", [])
        volumes = {volume["name"]: volume for volume in pod_spec(deployment).get("volumes", [])}
        store = setting(settings, "fleet.store") or ""
        paths = []
        if store.startswith("sqlite:"):
            paths.append(("fleet.store", urllib.parse.urlsplit(store).path, True))
        for key in ("store_password_file", "hash_key_file"):
            path = setting(settings, f"fleet.{key}")
            if path:
                paths.append((f"fleet.{key}", path, False))
        for name, path, writable in paths:
            mount = next((m for m in mounts if is_under(path, m["mountPath"])), None)
            if mount is None:
                self.error(deployment, f"{name} = {path} is on no volume mount")
                continue
            volume = volumes.get(mount["name"], {})
            if writable and (mount.get("readOnly") or "persistentVolumeClaim" not in volume):
                self.error(deployment, f"{name} = {path} is not on a writable PersistentVolumeClaim")

    # -- 3. how the objects fit together ----------------------------------

    def check_pod_security(self, deployment):
        """The restricted Pod Security Standard, which the overlays' namespace
        enforces: a violation would only show as pods that never start."""
        pod = pod_spec(deployment)
        pod_context = pod.get("securityContext", {})
        for key in ("hostNetwork", "hostPID", "hostIPC"):
            if pod.get(key):
                self.error(deployment, f"{key} is not allowed")
        for volume in pod.get("volumes", []):
            if "hostPath" in volume:
                self.error(deployment, f"hostPath volume {volume['name']} is not allowed")
        for container in pod.get("containers", []) + pod.get("initContainers", []):
            context = container.get("securityContext", {})
            where = f"container {container.get('name')}"
            if not context.get("runAsNonRoot", pod_context.get("runAsNonRoot")):
                self.error(deployment, f"{where}: runAsNonRoot must be true")
            if context.get("runAsUser", pod_context.get("runAsUser")) == 0:
                self.error(deployment, f"{where}: runAsUser must not be 0")
            if context.get("allowPrivilegeEscalation") is not False:
                self.error(deployment, f"{where}: allowPrivilegeEscalation must be false")
            if "ALL" not in context.get("capabilities", {}).get("drop", []):
                self.error(deployment, f"{where}: capabilities must drop ALL")
            seccomp = context.get("seccompProfile", pod_context.get("seccompProfile", {}))
            if seccomp.get("type") not in ("RuntimeDefault", "Localhost"):
                self.error(deployment, f"{where}: seccompProfile must be RuntimeDefault")
            if not context.get("readOnlyRootFilesystem"):
                self.error(deployment, f"{where}: readOnlyRootFilesystem must be true")
            resources = container.get("resources", {})
            for kind in ("requests", "limits"):
                for resource in ("cpu", "memory"):
                    if resource not in resources.get(kind, {}):
                        self.error(deployment, f"{where}: no {resource} {kind}")

    def check_topology(self):
        """One graph-builder per namespace, replaced, never rolled: more would
        each scrape the whole registry (docs/operations.md, Topology)."""
        builders = [(d, s) for d, _, s, _ in self.containers if s == "graph-builder"]
        by_namespace = {}
        for deployment, _ in builders:
            by_namespace.setdefault(namespace_of(deployment), []).append(deployment)
            if deployment["spec"].get("replicas") != 1:
                self.error(deployment, "the graph-builder must have replicas: 1")
            if deployment["spec"].get("strategy", {}).get("type") != "Recreate":
                self.error(deployment, "the graph-builder's strategy must be Recreate")
            if self.autoscaler_of(deployment):
                self.error(deployment, "the graph-builder must not be autoscaled")
        for namespace, deployments in by_namespace.items():
            if len(deployments) > 1:
                self.error(deployments[1], f"a second graph-builder in namespace {namespace}")

    def check_services(self):
        for service in self.of_kind("Service"):
            selected = self.selected_workloads(service, service["spec"].get("selector") or {})
            if len(selected) != 1:
                self.error(service, f"selector matches {len(selected)} Deployments, expected 1")
                continue
            ports = container_ports(selected[0])
            for port in service["spec"].get("ports", []):
                target = port.get("targetPort", port["port"])
                if target not in ports and target not in ports.values():
                    self.error(service, f"port {port.get('name')}: targetPort {target} is no container port of {selected[0]['metadata']['name']}")

    def check_service_monitors(self):
        for monitor in self.of_kind("ServiceMonitor"):
            selector = match_labels(monitor.get("spec", {}).get("selector", {}))
            services = [s for s in self.of_kind("Service") if namespace_of(s) == namespace_of(monitor) and matches(selector, labels_of(s))]
            if not services:
                self.error(monitor, "selects no Service")
            for endpoint in monitor.get("spec", {}).get("endpoints", []):
                if endpoint.get("path", "/metrics") != "/metrics":
                    self.error(monitor, f"endpoint path {endpoint.get('path')}: the services serve /metrics")
                for service in services:
                    port = next((p for p in service["spec"]["ports"] if p.get("name") == endpoint.get("port")), None)
                    if port is None:
                        self.error(monitor, f"Service {service['metadata']['name']} has no port named {endpoint.get('port')}")
                    elif port.get("targetPort") != "status":
                        self.error(monitor, f"Service {service['metadata']['name']} port {endpoint.get('port')} is not the status port")

    def check_autoscalers_and_budgets(self):
        for autoscaler in self.of_kind("HorizontalPodAutoscaler"):
            reference = autoscaler["spec"]["scaleTargetRef"]
            target = self.find(reference["kind"], reference["name"], autoscaler)
            if target is None:
                self.error(autoscaler, f"scaleTargetRef {reference['kind']}/{reference['name']} is not in the overlay")
            elif "replicas" in target["spec"]:
                self.error(target, "replicas is set although an autoscaler owns it (every apply would reset the scale)")
        for budget in self.of_kind("PodDisruptionBudget"):
            if not self.selected_workloads(budget, match_labels(budget["spec"].get("selector", {}))):
                self.error(budget, "selects no Deployment")

    def check_network_policies(self):
        for policy in self.of_kind("NetworkPolicy"):
            selected = self.selected_workloads(policy, match_labels(policy["spec"].get("podSelector", {})))
            if not selected:
                self.error(policy, "selects no Deployment")
            for rule in policy["spec"].get("ingress", []):
                for port in rule.get("ports", []):
                    for deployment in selected:
                        ports = container_ports(deployment)
                        if port["port"] not in ports and port["port"] not in ports.values():
                            self.error(policy, f"port {port['port']} is no container port of {deployment['metadata']['name']}")

    def check_upstreams(self):
        """A policy-engine whose upstream is a Service of the overlay must name
        that Service's API port and the upstream's own path prefix, and say
        the upstream's kind right."""
        for deployment, _, service, settings in self.containers:
            if service != "policy-engine":
                continue
            url = settings.get("plan", {}).get("upstream")
            if not url:
                self.error(deployment, "policy-engine --check-config printed no effective upstream")
                continue
            target = self.in_cluster_target(deployment, "upstream", url)
            if target is None:
                continue
            parsed, name, target_service, port = target
            port_number = port["port"]
            upstream = self.container_behind(target_service)
            if upstream is None:
                continue  # the Service's selector or the container's own check failed, and said so
            _, upstream_container, upstream_service, upstream_settings = upstream
            if port.get("targetPort") != SERVICES[upstream_service]["api_port"]:
                self.error(deployment, f"upstream {url}: port {port_number} of {name} is not the {upstream_service}'s Graph API")
            prefix = setting(upstream_settings, "service.path_prefix") or ""
            if parsed.path not in (f"{prefix}/graph", f"{prefix}/v1/graph"):
                self.error(deployment, f"upstream {url}: the {upstream_service} serves {prefix}/graph")
            kind = setting(settings, "upstream.cincinnati.kind")
            # The kinds are spelled as the services are named; `auto` fits any.
            if kind in SERVICES and kind != upstream_service:
                self.error(deployment, f"upstream kind {kind}, but {name} is a {upstream_service}")

    def check_graph_data_urls(self):
        """A metadata-helper following a graph-builder of the overlay must
        name its Service's graph-data port and its `{prefix}/graph-data`."""
        for deployment, _, service, settings in self.containers:
            if service != "metadata-helper":
                continue
            url = settings.get("plan", {}).get("graph_data_url")
            if not url:
                continue
            target = self.in_cluster_target(deployment, "graph-data URL", url)
            if target is None:
                continue
            parsed, name, target_service, port = target
            port_number = port["port"]
            builder = self.container_behind(target_service)
            if builder is None or builder[2] != "graph-builder":
                self.error(deployment, f"graph-data URL {url}: port {port_number} of {name} is not a graph-builder's Service")
                continue
            if port.get("targetPort") != "graph-data":
                self.error(deployment, f"graph-data URL {url}: port {port_number} of {name} is not the graph-builder's graph-data port")
            prefix = setting(builder[3], "service.path_prefix") or ""
            if parsed.path != f"{prefix}/graph-data":
                self.error(deployment, f"graph-data URL {url}: the graph-builder serves {prefix}/graph-data")

    def in_cluster_target(self, deployment, what, url):
        """The (parsed URL, Service name, Service, Service port) `url` names
        in the overlay, or None for a URL outside the cluster or one that
        names nothing (reported as `what`)."""
        parsed = urllib.parse.urlsplit(url)
        name = in_cluster_service(parsed.hostname or "", namespace_of(deployment))
        if name is None:
            return None
        target_service = self.find("Service", name, deployment)
        if target_service is None:
            self.error(deployment, f"{what} {url}: no Service {name} in the overlay")
            return None
        port_number = parsed.port or (443 if parsed.scheme == "https" else 80)
        port = next((p for p in target_service["spec"]["ports"] if p["port"] == port_number), None)
        if port is None:
            self.error(deployment, f"{what} {url}: Service {name} has no port {port_number}")
            return None
        return parsed, name, target_service, port

    # -- lookups -------------------------------------------------------------

    def of_kind(self, kind):
        return [d for d in self.docs if d.get("kind") == kind]

    def find(self, kind, name, near):
        return next(
            (d for d in self.of_kind(kind) if d["metadata"]["name"] == name and namespace_of(d) == namespace_of(near)),
            None,
        )

    def selected_workloads(self, selector_owner, selector):
        if not selector:
            return []
        return [
            d for d in self.workloads
            if namespace_of(d) == namespace_of(selector_owner) and matches(selector, pod_labels(d))
        ]

    def container_behind(self, service):
        selected = self.selected_workloads(service, service["spec"].get("selector") or {})
        return next((c for c in self.containers if selected and c[0] is selected[0]), None)

    def autoscaler_of(self, deployment):
        return [
            a for a in self.of_kind("HorizontalPodAutoscaler")
            if a["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
            and namespace_of(a) == namespace_of(deployment)
        ]


# -- helpers -------------------------------------------------------------------


def kubernetes_problem(doc):
    """What is wrong with a built-in object per the Kubernetes schemas, or
    None; a kind without a schema is a problem, not a pass."""
    for version in KUBERNETES_VERSIONS:
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.SchemaNotFoundError:
            return f"no schema for {doc.get('apiVersion')} {doc.get('kind')} in Kubernetes {version}"
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(part) for part in error.absolute_path) or "(top)"
            return f"Kubernetes {version} schema: {path}: {error.message}"
    return None


def pod_spec(deployment):
    return deployment.get("spec", {}).get("template", {}).get("spec", {})


def pod_labels(deployment):
    return deployment.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})


def labels_of(doc):
    return doc.get("metadata", {}).get("labels", {}) or {}


def namespace_of(doc):
    return doc.get("metadata", {}).get("namespace", "default")


def matches(selector, labels):
    """Whether `labels` has every label of `selector` (a matchLabels map); an
    empty selector matches nothing here, since none of ours is meant to."""
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


def match_labels(selector):
    if "matchExpressions" in selector:
        raise SystemExit("matchExpressions selectors are not checked; teach deploy/check/check.py")
    return selector.get("matchLabels", {})


def container_ports(deployment):
    return {
        port.get("name"): port["containerPort"]
        for container in pod_spec(deployment).get("containers", [])
        for port in container.get("ports", [])
    }


def image_name(image):
    """`registry/path/graph-builder:tag@digest` -> `graph-builder`."""
    last = image.split("@")[0].rsplit("/", 1)[-1]
    return last.split(":")[0]


def is_under(path, directory):
    return os.path.commonpath([path, directory.rstrip("/") or "/"]) == (directory.rstrip("/") or "/")


def rewrite_path(arg, mounts):
    """An argument (or a variable's value) naming a file of a mounted
    ConfigMap, made to name the materialised copy (also in the
    `--flag=path` form)."""
    flag, equals, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
    if not equals:
        flag, value = "", arg
    if value.startswith("/"):
        for mount_path, target in mounts.items():
            if is_under(value, mount_path):
                value = target + value[len(mount_path):]
                break
    return f"{flag}={value}" if flag else value


def config_file_of(args):
    for index, arg in enumerate(args):
        if arg in ("-c", "--config") and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--config="):
            return arg.split("=", 1)[1]
    return None


def in_cluster_service(host, namespace):
    """The Service name a host names in `namespace`, or None for a host
    outside the cluster."""
    for suffix in (f".{namespace}.svc.cluster.local", f".{namespace}.svc", f".{namespace}"):
        if host.endswith(suffix):
            return host[: -len(suffix)]
    return host if host and "." not in host else None


def setting(printed, dotted):
    """The value of setting `dotted` (`service.port`) in what `--check-config
    -o json` printed, as text (`8080`, `0.0.0.0`), or None when unset."""
    value = printed.get("settings", {})
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return None if value is None else str(value)


# -- self-test -------------------------------------------------------------------


def by(kind, name):
    def find(docs):
        return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)

    return find


def container(kind, name):
    return lambda docs: pod_spec(by(kind, name)(docs))["containers"][0]


GB = "cincinnati-graph-builder"
PE = "cincinnati-policy-engine"
MH = "cincinnati-metadata-helper"


def config_map(docs):
    """The graph-builder's configuration."""
    return next(d for d in docs if d["kind"] == "ConfigMap" and "gb.toml" in d.get("data", {}))


def set_arg(flag, value):
    def mutate(docs):
        args = container("Deployment", PE)(docs)["args"]
        args[args.index(flag) + 1] = value

    return mutate


def set_env(name, value):
    def mutate(docs):
        set_env_of(container("Deployment", PE)(docs), name, value)

    return mutate


def set_env_of(target, name, value):
    env = target.setdefault("env", [])
    for variable in env:
        if variable["name"] == name:
            variable["value"] = value
            return
    env.append({"name": name, "value": value})


# (what is broken, how, a fragment of the error that must be reported)
def helper_config(docs):
    return next(d for d in docs if d["kind"] == "ConfigMap" and "mh.toml" in d.get("data", {}))


def edit_helper_config(old, new):
    def mutate(docs):
        data = helper_config(docs)["data"]
        data["mh.toml"] = data["mh.toml"].replace(old, new)

    return mutate


BREAKAGES = [
    ("an unknown flag", lambda d: container("Deployment", PE)(d)["args"].append("--service.prot"), "refused the configuration"),
    ("an unknown environment setting", set_env("CINCINNATI_PE_SERVICE__PROT", "1"), "refused the configuration"),
    ("an unknown TOML key", lambda d: config_map(d)["data"].update({"gb.toml": config_map(d)["data"]["gb.toml"] + "\n[bogus]\nkey = 1\n"}), "refused the configuration"),
    ("a loopback listen address", set_arg("--status.address", "127.0.0.1"), "unreachable from outside the pod"),
    ("a container port the service does not listen on", lambda d: container("Deployment", PE)(d)["ports"][1].update({"containerPort": 9999}), "but policy-engine listens on"),
    ("a wrong probe path", lambda d: container("Deployment", GB)(d)["readinessProbe"]["httpGet"].update({"path": "/readyz"}), "readinessProbe path"),
    ("an unknown field", lambda d: by("Deployment", GB)(d)["spec"].update({"replica": 1}), "schema"),
    ("an invalid ServiceMonitor", lambda d: by("ServiceMonitor", "cincinnati")(d)["spec"]["endpoints"][0].update({"interval": "often"}), "CRD schema"),
    ("an invalid PrometheusRule", lambda d: by("PrometheusRule", "cincinnati")(d)["spec"]["groups"][0]["rules"][0].update({"for": "ten minutes"}), "CRD schema"),
    ("a Service selecting nothing", lambda d: by("Service", GB)(d)["spec"]["selector"].update({"app.kubernetes.io/name": "graph-bulider"}), "selector matches 0"),
    ("an upstream on the wrong port", set_env("CINCINNATI_PE_UPSTREAM__CINCINNATI__URL", f"http://{GB}:9080/api/upgrades_info/graph"), "is not the graph-builder's Graph API"),
    ("an upstream with the wrong prefix", set_env("CINCINNATI_PE_UPSTREAM__CINCINNATI__URL", f"http://{GB}:8080/graph"), "serves /api/upgrades_info/graph"),
    ("the scrape cache off its volume", lambda d: config_map(d)["data"].update({"gb.toml": config_map(d)["data"]["gb.toml"].replace("/var/cache/graph-builder/", "/tmp/")}), "is on no volume mount"),
    ("a second graph-builder replica", lambda d: by("Deployment", GB)(d)["spec"].update({"replicas": 2}), "replicas: 1"),
    ("a privileged container", lambda d: container("Deployment", PE)(d)["securityContext"].update({"allowPrivilegeEscalation": True}), "allowPrivilegeEscalation"),
    ("a helper following the graph-builder's Graph API", edit_helper_config(":8090/", ":8080/"), "is not the graph-builder's graph-data port"),
    ("a helper following the wrong prefix", edit_helper_config("/api/upgrades_info/graph-data", "/graph-data"), "serves /api/upgrades_info/graph-data"),
    ("the helper's work directory off its volume", edit_helper_config("/var/cache/metadata-helper", "/tmp/signatures"), "is on no volume mount"),
    ("a helper probe on the wrong path", lambda d: container("Deployment", MH)(d)["livenessProbe"]["httpGet"].update({"path": "/liveness"}), "livenessProbe path"),
    ("the fleet store's password file off its volume", lambda d: set_env_of(container("Deployment", PE + "-public")(d), "CINCINNATI_PE_FLEET__STORE_PASSWORD_FILE", "/tmp/password"), "is on no volume mount"),
    ("a SQLite fleet store on the container's filesystem", lambda d: set_env_of(container("Deployment", PE + "-public")(d), "CINCINNATI_PE_FLEET__STORE", "sqlite:///tmp/fleet.db"), "is on no volume mount"),
    ("a NetworkPolicy on a missing port", lambda d: by("NetworkPolicy", GB)(d)["spec"]["ingress"][0]["ports"][0].update({"port": "grpah"}), "is no container port"),
]


def self_test(checker, overlay, docs):
    failures = []
    checker.breaking = True
    for what, mutate, expected in BREAKAGES:
        broken = copy.deepcopy(docs)
        mutate(broken)
        errors = checker.check(f"{overlay} with {what}", broken)
        if checker.verbose:
            print(f"self-test: {what}: " + " | ".join(errors))
        if not any(expected in error for error in errors):
            failures.append(f"self-test: {what} was not reported (expected {expected!r}; got {errors})")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", required=True, help="where graph-builder and policy-engine are")
    parser.add_argument("--crd-models", required=True, help="the npm prefix holding @kubernetes-models/prometheus-operator")
    parser.add_argument("--self-test", action="store_true", help="also prove each check can fail")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("rendered", nargs="+", help="NAME=FILE: an overlay rendered by kubectl kustomize")
    options = parser.parse_args()
    checker = Checker(options.bin_dir, options.crd_models, options.verbose)
    errors = []
    overlays = []
    for item in options.rendered:
        name, _, path = item.partition("=")
        with open(path) as file:
            docs = [doc for doc in yaml.safe_load_all(file) if doc]
        overlays.append((name, docs))
        found = checker.check(name, docs)
        errors += found
        if not found:
            kinds = sorted({d["kind"] for d in docs})
            print(f"{name}: {len(docs)} objects valid and consistent ({', '.join(kinds)})")
    if options.self_test and not errors:
        failures = self_test(checker, *overlays[0])
        errors += failures
        if not failures:
            print(f"self-test: all {len(BREAKAGES)} deliberate breakages of {overlays[0][0]} were reported")
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
