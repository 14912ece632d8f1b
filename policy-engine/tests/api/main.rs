//! Black-box tests: real engines on loopback ports, in front of a real HTTP
//! upstream that a test can switch to errors, garbage, slowness or silence.

mod support;

mod alertmanager_webhook;
mod answers_at_hand;
mod caching;
mod chain;
mod cluster_policy;
mod cluster_scopes;
mod connections;
mod cors;
mod errors;
mod explorer;
mod fleet;
mod follow;
mod freshness;
mod negotiation;
mod openapi;
mod parameters;
mod phased_rollouts;
mod prometheus_halts;
mod resilience;
mod rollout_control;
mod rollout_gates;
mod rollout_promises;
mod status;
mod tls;
mod version_prune;
