//! `GET {prefix}/openapi`: the OpenAPI 3 document of the API as served:
//! paths under the prefix, mandatory parameters marked required.

use std::collections::BTreeSet;

use actix_web::{HttpRequest, HttpResponse, web};
use http_answers::accept::APPLICATION_JSON;
use http_answers::{CachePolicy, PathPrefix, PreparedBody};
use serde_json::{Value, json};

/// The document with prefix-less paths; `served` adapts it.
const TEMPLATE: &str = include_str!("openapi.json");

/// The served document, prepared once at start-up.
pub struct OpenApiDocument(PreparedBody);

impl OpenApiDocument {
    pub fn served(prefix: &PathPrefix, required: &BTreeSet<String>) -> Self {
        let mut document: Value =
            serde_json::from_str(TEMPLATE).expect("the embedded OpenAPI template is JSON");
        let paths = document["paths"].as_object_mut().expect("the template has paths");
        let prefixed: serde_json::Map<String, Value> = std::mem::take(paths)
            .into_iter()
            .map(|(path, mut item)| {
                if path.ends_with("/graph") {
                    mark_required(&mut item["get"]["parameters"], required);
                }
                (prefix.join(&path), item)
            })
            .collect();
        *paths = prefixed;
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
