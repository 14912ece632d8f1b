//! `GET {prefix}/openapi`: the OpenAPI 3 documents as served: the API's
//! (paths under the prefix, mandatory parameters marked required), and the
//! status port's (its routes under the prefix, the fleet's only with a
//! fleet store; the skeleton's probes, `/metrics` and `/status` at the
//! root).

use std::collections::BTreeSet;

use actix_web::{HttpRequest, HttpResponse, web};
use http_answers::accept::APPLICATION_JSON;
use http_answers::{CachePolicy, PathPrefix, PreparedBody};
use serde_json::{Value, json};

/// The documents with prefix-less paths; `served` and `status` adapt them.
const TEMPLATE: &str = include_str!("openapi.json");
const STATUS_TEMPLATE: &str = include_str!("status_openapi.json");

/// The served document, prepared once at start-up.
pub struct OpenApiDocument(PreparedBody);

impl OpenApiDocument {
    pub fn served(prefix: &PathPrefix, required: &BTreeSet<String>) -> Self {
        Self::adapted(TEMPLATE, |path, item| {
            if path.ends_with("/graph") {
                mark_required(&mut item["get"]["parameters"], required);
            }
            Some(prefix.join(path))
        })
    }

    /// The status port's document; the fleet's paths only with `fleet`,
    /// rollout control's only with `control`.
    pub fn status(prefix: &PathPrefix, fleet: bool, control: bool) -> Self {
        Self::adapted(STATUS_TEMPLATE, |path, _| {
            let controlled = path.starts_with("/v1/rollouts") || path.starts_with("/v1/alerts/");
            if (path.starts_with("/v1/fleet/") && !fleet) || (controlled && !control) {
                None
            } else if path.starts_with("/v1/") {
                Some(prefix.join(path))
            } else {
                Some(path.to_owned())
            }
        })
    }

    /// `template` with each path item passed through `adapt`, which gives
    /// its served path (`None`: left out).
    fn adapted(template: &str, adapt: impl Fn(&str, &mut Value) -> Option<String>) -> Self {
        let mut document: Value =
            serde_json::from_str(template).expect("the embedded OpenAPI template is JSON");
        let paths = document["paths"].as_object_mut().expect("the template has paths");
        let served: serde_json::Map<String, Value> = std::mem::take(paths)
            .into_iter()
            .filter_map(|(path, mut item)| Some((adapt(&path, &mut item)?, item)))
            .collect();
        *paths = served;
        Self(PreparedBody::new(
            serde_json::to_vec_pretty(&document).expect("a JSON value serialises"),
        ))
    }
}

/// Marks each parameter named in `required` as required, adding a string
/// query parameter for names the template does not list.
fn mark_required(parameters: &mut Value, required: &BTreeSet<String>) {
    let list = parameters.as_array_mut().expect("graph parameters are a list");
    for name in required {
        match list
            .iter_mut()
            .find(|parameter| parameter["name"] == name.as_str())
        {
            Some(parameter) => parameter["required"] = Value::Bool(true),
            None => list.push(json!({
                "name": name,
                "in": "query",
                "required": true,
                "description": "Mandatory in this deployment.",
                "schema": {"type": "string"},
            })),
        }
    }
}

pub async fn openapi(
    request: HttpRequest,
    document: web::Data<OpenApiDocument>,
    caching: web::Data<CachePolicy>,
) -> HttpResponse {
    document.0.respond(&request, APPLICATION_JSON, &caching)
}
