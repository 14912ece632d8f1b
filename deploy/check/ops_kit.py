"""Checks the operations kit (scripts/check-deploy.sh runs this): the
PrometheusRule's alerts and the Grafana dashboard in
deploy/kubernetes/base/monitoring/.

1. The PrometheusRule's groups, extracted into a plain rules file, pass
   `promtool check rules`, and its unit tests (deploy/check/alerts.test.yaml,
   run next to that file) pass `promtool test rules`.
2. Every alert has a severity, a summary, a description and a runbook_url
   naming its heading under docs/operations.md's "Alerts" (which has a
   heading for every alert and for nothing else), and a test case where it
   fires and one where it does not.
3. The dashboard is JSON with a unique id, a title, the ${datasource} on
   every panel, and targets with a refId and an expression each; every
   expression is PromQL (promtool checks them as recording rules, Grafana's
   variables replaced by values); it still shows the metrics upstream's SLI
   dashboard queries.
4. Every metric the rules, the tests' input series and the dashboard name
   is in docs/operations.md's metric tables (which the services'
   tests/operations_doc.rs hold equal to what they register; their
   tests/ops_kit.rs check the same names against the registries) or is one
   of EXTERNAL_METRICS.
5. Every rendered overlay holds the PrometheusRule and the dashboard as a
   ConfigMap labelled grafana_dashboard: "1".

`--self-test` then breaks the kit in one way per check and fails unless
each break is reported, so every check is known to be able to fail.
"""

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

# Metrics the kit may name that no service of ours exposes, and who does.
EXTERNAL_METRICS = {
    "up": "Prometheus, for every target it scrapes",
    "container_memory_working_set_bytes": "the kubelet's cAdvisor (the services export no process metrics)",
}
# What upstream's SLI dashboard queries: the dashboard keeps using them.
UPSTREAM_DASHBOARD_METRICS = [
    "cincinnati_gb_graph_last_successful_refresh_timestamp",
    "cincinnati_pe_graph_incoming_requests_total",
]
# The name the tests' copy of the rules has (the tests' rule_files).
RULES_FILE = "cincinnati.rules.yaml"
SEVERITIES = {"info", "warning", "critical"}

# What is not a metric name in an expression: quoted strings, label
# matchers, ranges and durations, grouping labels, functions (an identifier
# followed by `(`), keywords and numbers.
STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
MATCHERS = re.compile(r"\{[^}]*\}")
RANGE = re.compile(r"\[[^\]]*\]")
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
IDENTIFIER = re.compile(r"(?<![\w.:$])([A-Za-z_:][A-Za-z0-9_:]*)\b(?!\s*\()")
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool", "inf", "nan"}
# Grafana's variables, as values promtool can parse.
GRAFANA_INTERVAL = re.compile(r"\$__(?:rate_interval|interval|range)\b")
GRAFANA_VARIABLE = re.compile(r"\$\{?\w+\}?")
LABEL_VALUES = re.compile(r"^label_values\((?:(.*),)?\s*\w+\s*\)$")


def metric_names(expr):
    """The metric names a PromQL expression selects."""
    text = STRING.sub('""', expr)
    text = MATCHERS.sub("", text)
    text = RANGE.sub("", text)
    text = GROUPING.sub("", text)
    return {name for name in IDENTIFIER.findall(text) if name.lower() not in KEYWORDS}


def documented_metrics(doc):
    """{name: type} of every `<!-- metrics: SERVICE -->` table in the doc."""
    metrics = {}
    for marker in re.finditer(r"<!-- metrics: [\w-]+ -->\n+((?:\|.*\n)+)", doc):
        for line in marker.group(1).splitlines()[2:]:
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            metrics[cells[0].strip("`")] = cells[1]
    return metrics


def alert_headings(doc):
    """{slug: title} of the headings in the doc's "Alerts" section."""
    section = re.search(r"^## Alerts\n(.*?)(?=^## )", doc, re.S | re.M)
    if not section:
        return {}
    headings = {}
    for title in re.findall(r"^#{3,4} (.+)$", section.group(1), re.M):
        headings[github_slug(title)] = title.strip("`")
    return headings


def github_slug(title):
    """The anchor GitHub gives a heading."""
    slug = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return slug.replace(" ", "-")


def rules_of(document):
    return [rule for group in document["spec"]["groups"] for rule in group["rules"]]


class Kit:
    """What is checked: the PrometheusRule, the text of its tests, the
    dashboard, the operations doc and the rendered overlays."""

    def __init__(self, rule, tests_text, dashboard, doc, overlays):
        self.rule = rule
        self.tests_text = tests_text
        self.dashboard = dashboard
        self.doc = doc
        self.overlays = overlays


class Checker:
    def __init__(self, promtool, verbose=False):
        self.promtool = promtool
        self.verbose = verbose
        # promtool's findings by its input: the self-test re-checks mostly
        # unchanged inputs, and `promtool test rules` is the slow part.
        self.promtool_problems = {}
        # Set by the self-test for breaks that `promtool test rules` is not
        # the check of: each of its runs takes seconds.
        self.skip_rule_tests = False

    def check(self, kit):
        """Every problem found in the kit, as strings."""
        self.errors = []
        self.kit = kit
        self.metrics = documented_metrics(kit.doc)
        if not self.metrics:
            self.errors.append("docs/operations.md: no metric tables found")
        tests = yaml.safe_load(kit.tests_text)
        self.check_promtool(tests)
        self.check_alerts(tests)
        self.check_dashboard()
        self.check_names(tests)
        self.check_overlays()
        return self.errors

    # -- 1. promtool -----------------------------------------------------------

    def check_promtool(self, tests):
        if tests.get("rule_files") != [RULES_FILE]:
            self.errors.append(f"alerts.test.yaml: rule_files must be [{RULES_FILE}], the extracted rules")
        # Tests are written as they are: YAML 1.1 readers take promtool's
        # `0x40` (0 forty-one times) for a number.
        rules_text = yaml.safe_dump({"groups": self.kit.rule["spec"]["groups"]}, sort_keys=False)
        key = (rules_text, self.kit.tests_text, self.skip_rule_tests)
        if key not in self.promtool_problems:
            with tempfile.TemporaryDirectory() as directory:
                rules = os.path.join(directory, RULES_FILE)
                with open(rules, "w") as file:
                    file.write(rules_text)
                tests_file = os.path.join(directory, "tests.yaml")
                with open(tests_file, "w") as file:
                    file.write(self.kit.tests_text)
                problem = self.run("check", "rules", rules)
                if not problem and not self.skip_rule_tests:
                    problem = self.run("test", "rules", tests_file)
            self.promtool_problems[key] = problem
        if self.promtool_problems[key]:
            self.errors.append(self.promtool_problems[key])

    def run(self, *args):
        """What promtool found wrong, or None."""
        result = subprocess.run([self.promtool, *args], capture_output=True, text=True, timeout=120)
        if self.verbose:
            print(result.stdout.strip())
        if result.returncode != 0:
            return f"promtool {' '.join(args[:2])} failed:\n{(result.stdout + result.stderr).strip()}"
        return None

    # -- 2. each alert: labels, annotations, runbook, tests ---------------------------

    def check_alerts(self, tests):
        alerts = [rule for rule in rules_of(self.kit.rule) if "alert" in rule]
        names = [rule["alert"] for rule in alerts]
        for name in {name for name in names if names.count(name) > 1}:
            self.errors.append(f"PrometheusRule: two alerts are called {name}")
        headings = alert_headings(self.kit.doc)
        cases = {}
        for test in tests.get("tests", []):
            for case in test.get("alert_rule_test", []):
                fires = bool(case.get("exp_alerts"))
                cases.setdefault(case["alertname"], set()).add(fires)
        for rule in alerts:
            name = rule["alert"]
            if rule.get("labels", {}).get("severity") not in SEVERITIES:
                self.errors.append(f"alert {name}: severity must be one of {sorted(SEVERITIES)}")
            if "rollout_target" in rule.get("labels", {}):
                self.errors.append(f"alert {name}: a rollout_target label would pause that rollout (the webhook)")
            annotations = rule.get("annotations", {})
            for key in ("summary", "description"):
                if not annotations.get(key):
                    self.errors.append(f"alert {name}: no {key} annotation")
            slug = github_slug(f"`{name}`")
            if annotations.get("runbook_url") != f"docs/operations.md#{slug}":
                self.errors.append(f"alert {name}: runbook_url must be docs/operations.md#{slug}")
            if slug not in headings:
                self.errors.append(f"alert {name}: docs/operations.md has no heading `{name}` under Alerts")
            if True not in cases.get(name, set()):
                self.errors.append(f"alert {name}: no test case where it fires (alerts.test.yaml)")
            if False not in cases.get(name, set()):
                self.errors.append(f"alert {name}: no test case where it does not fire (alerts.test.yaml)")
        for slug, title in headings.items():
            if title not in names and re.fullmatch(r"Cincinnati\w+", title):
                self.errors.append(f"docs/operations.md: heading {title} under Alerts is no alert of the PrometheusRule")
        for name in set(cases) - set(names):
            self.errors.append(f"alerts.test.yaml: tests alert {name}, which the PrometheusRule does not have")

    # -- 3. the dashboard ------------------------------------------------------------

    def check_dashboard(self):
        dashboard = self.kit.dashboard
        for key in ("uid", "title", "panels", "templating"):
            if not dashboard.get(key):
                self.errors.append(f"dashboard: no {key}")
        variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
        if variables.get("datasource", {}).get("type") != "datasource":
            self.errors.append("dashboard: no `datasource` variable of type datasource")
        ids = []
        expressions = []
        for panel in all_panels(dashboard):
            ids.append(panel.get("id"))
            if panel.get("type") == "row":
                continue
            where = f"dashboard: panel {panel.get('id')} ({panel.get('title')})"
            if (panel.get("datasource") or {}).get("uid") != "${datasource}":
                self.errors.append(f"{where}: datasource must be the ${{datasource}} variable")
            if not panel.get("gridPos"):
                self.errors.append(f"{where}: no gridPos")
            targets = panel.get("targets") or []
            if not targets:
                self.errors.append(f"{where}: no targets")
            references = [target.get("refId") for target in targets]
            if None in references or len(set(references)) != len(references):
                self.errors.append(f"{where}: every target needs its own refId")
            for target in targets:
                if not target.get("expr"):
                    self.errors.append(f"{where}: target {target.get('refId')} has no expr")
                else:
                    expressions.append((f"panel_{panel.get('id')}_{target.get('refId')}", target["expr"]))
        used = set().union(*(metric_names(expr) for _, expr in expressions))
        for name in UPSTREAM_DASHBOARD_METRICS:
            if name not in used:
                self.errors.append(f"dashboard: no panel shows {name}, which upstream's SLI dashboard queries")
        duplicated = sorted({i for i in ids if ids.count(i) > 1}, key=str)
        if None in ids or duplicated:
            self.errors.append(f"dashboard: panel ids must be unique and set (duplicated: {duplicated})")
        # Every expression is PromQL: promtool parses it as a recording rule.
        rules = [{"record": f"dashboard_{name}", "expr": as_promql(expr)} for name, expr in expressions]
        rules_text = yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]})
        if rules_text not in self.promtool_problems:
            with tempfile.TemporaryDirectory() as directory:
                path = os.path.join(directory, "dashboard.rules.yaml")
                with open(path, "w") as file:
                    file.write(rules_text)
                self.promtool_problems[rules_text] = self.run("check", "rules", path)
        if self.promtool_problems[rules_text]:
            self.errors.append(f"dashboard: promtool refuses an expression: {self.promtool_problems[rules_text]}")

    # -- 4. metric names -------------------------------------------------------------

    def check_names(self, tests):
        recorded = {rule["record"] for rule in rules_of(self.kit.rule) if "record" in rule}
        uses = []
        for rule in rules_of(self.kit.rule):
            uses.append((f"rule {rule.get('alert') or rule.get('record')}", rule["expr"]))
        for test in tests.get("tests", []):
            for series in test.get("input_series", []):
                uses.append((f"alerts.test.yaml ({test.get('name')})", series["series"]))
            for case in test.get("promql_expr_test", []):
                uses.append((f"alerts.test.yaml ({test.get('name')})", case["expr"]))
        for panel in all_panels(self.kit.dashboard):
            for target in panel.get("targets") or []:
                uses.append((f"dashboard panel {panel.get('id')} ({panel.get('title')})", target.get("expr", "")))
        for variable in self.kit.dashboard.get("templating", {}).get("list", []):
            query = variable.get("query")
            query = query.get("query", "") if isinstance(query, dict) else query
            if variable.get("type") == "query":
                match = LABEL_VALUES.match(query or "")
                if not match:
                    self.errors.append(f"dashboard variable {variable.get('name')}: only label_values(...) queries are checked")
                elif match.group(1):
                    uses.append((f"dashboard variable {variable.get('name')}", match.group(1)))
        for where, expr in uses:
            for name in sorted(metric_names(expr)):
                if not (self.exists(name) or name in EXTERNAL_METRICS or name in recorded):
                    self.errors.append(
                        f"{where}: {name} names no metric a service registers (docs/operations.md's metric tables)"
                        " nor one of EXTERNAL_METRICS in deploy/check/ops_kit.py"
                    )

    def exists(self, name):
        if name in self.metrics:
            return True
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        return self.metrics.get(base) == "histogram"

    # -- 5. the rendered overlays ------------------------------------------------------

    def check_overlays(self):
        for name, docs in self.kit.overlays:
            rules = [d for d in docs if d.get("kind") == "PrometheusRule"]
            if len(rules) != 1 or rules[0].get("spec") != self.kit.rule["spec"]:
                self.errors.append(f"{name}: holds {len(rules)} PrometheusRules, expected the kit's one")
            maps = [
                d for d in docs
                if d.get("kind") == "ConfigMap" and (d["metadata"].get("labels") or {}).get("grafana_dashboard") == "1"
            ]
            if len(maps) != 1:
                self.errors.append(f"{name}: holds {len(maps)} ConfigMaps labelled grafana_dashboard: \"1\", expected 1")
                continue
            data = maps[0].get("data") or {}
            if list(data) != ["cincinnati-dashboard.json"] or json.loads(data["cincinnati-dashboard.json"]) != self.kit.dashboard:
                self.errors.append(f"{name}: ConfigMap {maps[0]['metadata']['name']} does not hold the dashboard")


def all_panels(dashboard):
    """Every panel, those inside collapsed rows too."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def as_promql(expr):
    """A dashboard expression with Grafana's variables replaced by values."""
    return GRAFANA_VARIABLE.sub(".*", GRAFANA_INTERVAL.sub("5m", expr))


# -- self-test ---------------------------------------------------------------------


def rule_named(kit, name):
    return next(rule for rule in rules_of(kit.rule) if rule.get("alert") == name)


def panel_titled(kit, title):
    return next(panel for panel in all_panels(kit.dashboard) if panel.get("title") == title)


def edit_rule(name, key, value):
    def mutate(kit):
        rule_named(kit, name)[key] = value

    return mutate


def edit_tests(old, new):
    def mutate(kit):
        assert old in kit.tests_text, old
        kit.tests_text = kit.tests_text.replace(old, new)

    return mutate


def edit_panel(title, change):
    def mutate(kit):
        change(panel_titled(kit, title))

    return mutate


def drop_heading(name):
    def mutate(kit):
        kit.doc = kit.doc.replace(f"`{name}`", f"`{name}Gone`")

    return mutate


def drop_firing_case(name):
    """Removes the cases where alert `name` fires from the tests' text."""
    case = re.compile(rf"^      - eval_time: \S+\n        alertname: {name}\n        exp_alerts:\n(?:(?!      [-#]).*\n)+", re.M)

    def mutate(kit):
        kit.tests_text, removed = case.subn("", kit.tests_text)
        assert removed, name

    return mutate


def unlabel_dashboard(kit):
    for _, docs in kit.overlays[:1]:
        for doc in docs:
            if doc.get("kind") == "ConfigMap":
                (doc["metadata"].get("labels") or {}).pop("grafana_dashboard", None)


def set_expr(panel, expr):
    panel["targets"][0]["expr"] = expr


# (what is broken, how, a fragment of the error that must be reported)
BREAKAGES = [
    ("an alert expression PromQL cannot parse", edit_rule("CincinnatiPolicyEngineUpstreamFailing", "expr", "max by (job (cincinnati_pe_upstream_stale)"), "promtool check rules failed"),
    ("an alert whose tests no longer hold", edit_rule("CincinnatiGraphBuilderGraphStale", "expr", "time() - cincinnati_gb_graph_last_successful_refresh_timestamp > 3600"), "promtool test rules failed"),
    ("an alert on a renamed metric", edit_rule("CincinnatiPolicyEngineUpstreamFailing", "expr", "max by (namespace, job) (cincinnati_pe_upstream_is_stale) == 1"), "cincinnati_pe_upstream_is_stale names no metric"),
    ("a test series of a renamed metric", edit_tests("cincinnati_mh_signatures_refresh_failing{", "cincinnati_mh_refresh_failing{"), "cincinnati_mh_refresh_failing names no metric"),
    ("an alert without a runbook", lambda kit: rule_named(kit, "CincinnatiRolloutPaused")["annotations"].pop("runbook_url"), "runbook_url must be"),
    ("an alert the doc does not list", drop_heading("CincinnatiFleetChecksDropped"), "has no heading `CincinnatiFleetChecksDropped`"),
    ("an alert without a severity", lambda kit: rule_named(kit, "CincinnatiTargetDown")["labels"].pop("severity"), "severity must be"),
    ("an alert with no case where it fires", drop_firing_case("CincinnatiTaskRestarting"), "no test case where it fires"),
    ("a dashboard panel on a renamed metric", edit_panel("Paused rollouts", lambda p: set_expr(p, "max by (target) (cincinnati_pe_rollouts_paused)")), "cincinnati_pe_rollouts_paused names no metric"),
    ("a dashboard expression PromQL cannot parse", edit_panel("Recording queue depth", lambda p: set_expr(p, "sum by (pod (cincinnati_pe_fleet_queue_depth)")), "promtool refuses an expression"),
    ("a dashboard panel on another data source", edit_panel("Memory", lambda p: p.update({"datasource": {"type": "prometheus", "uid": "prod"}})), "datasource must be"),
    ("a dashboard without upstream's graph timestamp", edit_panel("Graph age", lambda p: p["targets"].pop(0)), "which upstream's SLI dashboard queries"),
    ("two dashboard panels with one id", edit_panel("Memory", lambda p: p.update({"id": 1})), "panel ids must be unique"),
    ("the dashboard ConfigMap without its label", unlabel_dashboard, "labelled grafana_dashboard"),
]


def self_test(checker, kit):
    failures = []
    for what, mutate, expected in BREAKAGES:
        broken = copy.deepcopy(kit)
        mutate(broken)
        checker.skip_rule_tests = "promtool test rules" not in expected
        errors = checker.check(broken)
        if checker.verbose:
            print(f"self-test: {what}: " + " | ".join(errors))
        if not any(expected in error for error in errors):
            failures.append(f"self-test: {what} was not reported (expected {expected!r}; got {errors})")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rule", required=True, help="the PrometheusRule")
    parser.add_argument("--tests", required=True, help="promtool's unit tests of its alerts")
    parser.add_argument("--dashboard", required=True, help="the Grafana dashboard (JSON)")
    parser.add_argument("--doc", required=True, help="docs/operations.md")
    parser.add_argument("--promtool", default="promtool")
    parser.add_argument("--self-test", action="store_true", help="also prove each check can fail")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("rendered", nargs="*", help="NAME=FILE: an overlay rendered by kubectl kustomize")
    options = parser.parse_args()
    with open(options.rule) as file:
        rule = yaml.safe_load(file)
    with open(options.tests) as file:
        tests_text = file.read()
    with open(options.dashboard) as file:
        dashboard = json.load(file)
    with open(options.doc) as file:
        doc = file.read()
    overlays = []
    for item in options.rendered:
        name, _, path = item.partition("=")
        with open(path) as file:
            overlays.append((name, [d for d in yaml.safe_load_all(file) if d]))
    kit = Kit(rule, tests_text, dashboard, doc, overlays)
    checker = Checker(options.promtool, options.verbose)
    errors = checker.check(kit)
    if not errors:
        alerts = [r for r in rules_of(rule) if "alert" in r]
        targets = sum(len(p.get("targets") or []) for p in all_panels(dashboard))
        print(
            f"operations kit: {len(alerts)} alerts pass promtool check rules and test rules, each documented and"
            f" tested firing and quiet; {targets} dashboard expressions parse; every metric named exists"
        )
    if options.self_test and not errors:
        failures = self_test(checker, kit)
        errors += failures
        if not failures:
            print(f"self-test: all {len(BREAKAGES)} deliberate breakages of the operations kit were reported")
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
