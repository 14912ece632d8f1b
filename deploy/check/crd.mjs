// Validates custom resources against their CRD's OpenAPI schema, for
// check.py: kubernetes-validate bundles only the built-in kinds. The schemas
// come from @kubernetes-models/prometheus-operator (validators generated from
// the prometheus-operator CRDs), installed by scripts/check-deploy.sh under
// the npm prefix given as the first argument.
//
// stdin: a JSON array of objects; stdout: a JSON array with, for each, null
// or what is wrong with it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const prefix = process.argv[2];
const models = join(prefix, "node_modules", "@kubernetes-models", "prometheus-operator");
const kinds = {
  "monitoring.coreos.com/v1/ServiceMonitor": "monitoring.coreos.com/v1/ServiceMonitor.js",
  "monitoring.coreos.com/v1/PrometheusRule": "monitoring.coreos.com/v1/PrometheusRule.js",
};

const documents = JSON.parse(readFileSync(0, "utf8"));
const problems = [];
for (const document of documents) {
  const module = kinds[`${document.apiVersion}/${document.kind}`];
  if (!module) {
    problems.push(`no schema for ${document.apiVersion} ${document.kind}`);
    continue;
  }
  const model = await import(pathToFileURL(join(models, module)).href);
  try {
    new model[document.kind](document).validate();
    problems.push(null);
  } catch (error) {
    problems.push(error.message);
  }
}
process.stdout.write(JSON.stringify(problems));
