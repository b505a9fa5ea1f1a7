#!/usr/bin/env bash
# Validate the deployment files in deploy/ without a container engine or a cluster:
#
#   docker-compose.yml   compose-spec JSON schema (check-jsonschema's vendored copy)
#   k8s/*.yaml           Kubernetes OpenAPI schemas, strict (kubernetes-validate); the
#                        kustomize rendering too when kubectl is installed
#   systemd/*            systemd-analyze verify (Debian's systemd), warnings are errors
#   Dockerfile           parsed by BuildKit's own parser (PyPI `dockerfile`) plus rules:
#                        pinned base images, COPY --from names an earlier stage, files
#                        copied from the context exist, the runtime stage is non-root
#   all of them          every `zhiwen ...` command line they run is accepted by the real
#                        binary (`zhiwen ARGS --help`), every ZHIWEN_* variable they set is
#                        one the binary reads, the settings files parse with the binary's
#                        own (strict) settings loader, and every ${VAR} compose needs is in
#                        .env.example
#
# Not validated (no tool for it here): building the image (no container engine; hadolint
# is not in the package registries) and running the stacks.
#
# Installs pinned tools from PyPI into .test-servers/deploy-venv. Builds and uses
# target/debug/zhiwen. Exit status non-zero on any finding.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"

step() { printf '\n==> %s\n' "$*"; }

VENV="$ROOT/.test-servers/deploy-venv"
if [ ! -x "$VENV/bin/kubernetes-validate" ] || [ ! -x "$VENV/bin/check-jsonschema" ]; then
    step "installing validators into .test-servers/deploy-venv (PyPI)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check \
        check-jsonschema==0.39.0 kubernetes-validate==1.37.0 dockerfile==3.4.0 ruamel.yaml
fi
if ! command -v systemd-analyze >/dev/null; then
    step "installing systemd-analyze (Debian package systemd)"
    # shellcheck source=lib/apt.sh
    source "$ROOT/scripts/lib/apt.sh"
    apt_install systemd
fi

step "building zhiwen (the command-line checks run the real binary)"
cargo build --locked --bin zhiwen
ZHIWEN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/zhiwen"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

step "compose: deploy/docker-compose.yml against the compose-spec schema"
"$VENV/bin/check-jsonschema" --builtin-schema vendor.compose-spec deploy/docker-compose.yml

step "kubernetes: deploy/k8s/*.yaml against the Kubernetes 1.37 schemas (strict)"
k8s_files=()
for f in deploy/k8s/*.yaml; do
    [ "$(basename "$f")" = kustomization.yaml ] || k8s_files+=("$f")
done
"$VENV/bin/kubernetes-validate" --strict --quiet "${k8s_files[@]}"
echo "ok -- ${#k8s_files[@]} files"
if command -v kubectl >/dev/null; then
    kubectl kustomize deploy/k8s >"$TMP/rendered.yaml"
    "$VENV/bin/kubernetes-validate" --strict --quiet "$TMP/rendered.yaml"
    echo "ok -- kustomize rendering ($(grep -c '^kind:' "$TMP/rendered.yaml") resources)"
else
    echo "kubectl not installed: kustomization.yaml not rendered (its resources are validated above)"
fi

step "systemd: systemd-analyze verify deploy/systemd/* (in a scratch root; any warning fails)"
SYSROOT="$TMP/sysroot"
mkdir -p "$SYSROOT/etc/systemd/system" "$SYSROOT/usr/lib/systemd" "$SYSROOT/usr/local/bin" "$SYSROOT/etc/zhiwen"
cp -r /usr/lib/systemd/system "$SYSROOT/usr/lib/systemd/"
# The units' ExecStart binary must exist and be executable inside the root.
printf '#!/bin/sh\n' >"$SYSROOT/usr/local/bin/zhiwen"
chmod +x "$SYSROOT/usr/local/bin/zhiwen"
cp deploy/systemd/zhiwen.env.example "$SYSROOT/etc/zhiwen/zhiwen.env"
units=()
for f in deploy/systemd/*.service deploy/systemd/*.target; do
    cp "$f" "$SYSROOT/etc/systemd/system/"
    name="$(basename "$f")"
    case "$name" in *@.service) name="${name%@.service}@1.service" ;; esac
    units+=("/etc/systemd/system/$name")
done
out="$(systemd-analyze verify --man=no --root="$SYSROOT" "${units[@]}" 2>&1)" || { echo "$out"; exit 1; }
if [ -n "$out" ]; then
    echo "$out"
    echo "systemd-analyze reported the above" >&2
    exit 1
fi
echo "ok -- ${#units[@]} units"

step "Dockerfile, command lines, environment variables, settings files"
"$VENV/bin/python" - "$ZHIWEN" "$TMP" <<'PY'
import os
import re
import subprocess
import sys

import dockerfile
from ruamel.yaml import YAML

zhiwen, tmp = sys.argv[1], sys.argv[2]
errors = []
yaml = YAML(typ="safe")

# Subcommands the deployment runs that are specified but not in the build yet (none now:
# every command line must be accepted by the binary).
PENDING = set()


def err(msg):
    errors.append(msg)
    print("  ERROR", msg)


# ---- Dockerfile ----
cmds = dockerfile.parse_file("deploy/Dockerfile")
stages, final_user = [], None
args = {}
for c in cmds:
    if c.cmd == "ARG" and not stages:
        k, _, v = c.value[0].partition("=")
        args[k] = v
    elif c.cmd == "FROM":
        image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), c.value[0])
        name, _, tag = image.partition(":")
        if not tag or tag == "latest" or "$" in tag:
            err(f"Dockerfile: base image {c.value[0]} is not pinned to a tag")
        if len(c.value) != 3 or c.value[1].upper() != "AS":
            err(f"Dockerfile: stage FROM {c.value[0]} has no name")
        stages.append(c.value[-1])
        final_user = None
    elif c.cmd == "USER":
        final_user = c.value[0]
    elif c.cmd == "COPY":
        src_from = [f.split("=", 1)[1] for f in c.flags if f.startswith("--from=")]
        if src_from:
            if src_from[0] not in stages[:-1]:
                err(f"Dockerfile: COPY --from={src_from[0]} names no earlier stage")
        else:
            for src in c.value[:-1]:
                if not os.path.exists(src):
                    err(f"Dockerfile: COPY source {src} does not exist in the build context")
if final_user in (None, "root", "0") or str(final_user).startswith(("root:", "0:")):
    err("Dockerfile: the runtime stage runs as root (no USER)")
print(f"  Dockerfile: {len(cmds)} instructions, stages {', '.join(stages)}, runtime user {final_user}")


# ---- zhiwen command lines ----
def run(argv):
    return subprocess.run([zhiwen, *argv], capture_output=True, text=True)


top_help = run(["--help"]).stdout
commands = set(re.findall(r"^  ([a-z][a-z-]+)\s", top_help.split("Commands:")[1].split("Options:")[0], re.M))
helps = [top_help, run(["--help"]).stderr]
for c in sorted(commands - {"help"}):
    helps.append(run([c, "--help"]).stdout)
help_text = "\n".join(helps)

lines = []  # (where, argv)
compose = yaml.load(open("deploy/docker-compose.yml", encoding="utf-8"))
for name, svc in compose["services"].items():
    if str(svc.get("image", "")).startswith("${ZHIWEN_IMAGE"):
        lines.append((f"docker-compose.yml {name}", list(svc["command"])))
for fname in sorted(os.listdir("deploy/k8s")):
    for doc in yaml.load_all(open(os.path.join("deploy/k8s", fname), encoding="utf-8")):
        if not doc:
            continue
        spec = doc.get("spec", {})
        pod = spec.get("template", {}).get("spec", {})
        for c in pod.get("containers", []):
            if c["image"].startswith("zhiwen"):
                lines.append((f"k8s/{fname} {doc['metadata']['name']}", list(c.get("args", []))))
for fname in sorted(os.listdir("deploy/systemd")):
    for line in open(os.path.join("deploy/systemd", fname), encoding="utf-8"):
        if line.startswith("ExecStart=/usr/local/bin/zhiwen"):
            lines.append((f"systemd/{fname}", line.split()[1:]))
for where, argv in lines:
    sub = argv[0] if argv else ""
    if sub not in commands:
        if sub in PENDING:
            print(f"  pending: {where}: `zhiwen {' '.join(argv)}` (`{sub}` is not in this build yet)")
            continue
        err(f"{where}: `zhiwen {sub}` is not a zhiwen subcommand")
        continue
    r = run([*argv, "--help"])
    if r.returncode != 0:
        err(f"{where}: `zhiwen {' '.join(argv)}` is refused: {r.stderr.strip().splitlines()[0] if r.stderr.strip() else r.returncode}")
    else:
        print(f"  ok: {where}: zhiwen {' '.join(argv)}")

# ---- environment variables ----
known = set(re.findall(r"ZHIWEN_[A-Z_]+", help_text))
used = {}
for d, _, files in os.walk("deploy"):
    for f in files:
        path = os.path.join(d, f)
        if f.endswith((".md",)):
            continue
        for v in re.findall(r"ZHIWEN_[A-Z_]+", open(path, encoding="utf-8").read()):
            used.setdefault(v, path)
# Variables of the deployment files themselves, not of the binary.
compose_only = {"ZHIWEN_IMAGE", "ZHIWEN_HTTP_PORT"}
for v, path in sorted(used.items()):
    if v not in known and v not in compose_only:
        err(f"{path}: {v} is not read by zhiwen (not in any --help)")
print(f"  environment: {len(used)} ZHIWEN_* variables used, all read by zhiwen" if not errors else "")

# ---- compose ${VAR}s are in .env.example ----
env_example = {l.split("=", 1)[0] for l in open("deploy/.env.example", encoding="utf-8") if "=" in l and not l.startswith("#")}
for v in sorted(set(re.findall(r"\$\{([A-Z_]+)", open("deploy/docker-compose.yml", encoding="utf-8").read()))):
    if v not in env_example:
        err(f"docker-compose.yml uses ${{{v}}} but deploy/.env.example does not set it")

# ---- settings files parse with zhiwen's own strict loader ----
settings = [("deploy/zhiwen.toml", open("deploy/zhiwen.toml", encoding="utf-8").read())]
for doc in yaml.load_all(open("deploy/k8s/configmap.yaml", encoding="utf-8")):
    if doc and "zhiwen.toml" in doc.get("data", {}):
        settings.append(("deploy/k8s/configmap.yaml zhiwen.toml", doc["data"]["zhiwen.toml"]))
for i, (where, text) in enumerate(settings):
    path = os.path.join(tmp, f"settings-{i}.toml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    # Local embedded store so that only the file is checked, not a server.
    r = run(["--config", path, "--store", "embedded", "--index", "embedded", "--data-dir", os.path.join(tmp, f"data-{i}"),
             "report", "export", "--format", "json"])
    if r.returncode != 0:
        err(f"{where}: zhiwen refuses it: {r.stderr.strip()}")
    else:
        print(f"  ok: {where} parses")

if errors:
    print(f"\n{len(errors)} problem(s) in deploy/")
    sys.exit(1)
print("\ndeploy/: all checks passed")
PY
