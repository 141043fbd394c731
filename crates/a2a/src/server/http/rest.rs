//! The HTTP+JSON binding: paths matched against the generated `google.api.http` rules,
//! path variables and typed query parameters turned into request fields, AIP-193 errors.

use super::*;
use crate::server::auth::percent_decode;

/// An error as the AIP-193 body text of an SSE `error` event.
fn rest_error_text(e: &A2aError, table: ErrorTable) -> String {
    serde_json::to_string(&e.rest_body(table)).unwrap_or_default()
}

pub(crate) fn rest_error(e: &A2aError, table: ErrorTable) -> Response {
    // The core names request fields as JSON-RPC sees them (`$.params.…`); on this
    // binding the request object is the body itself (`$.…`).
    let mut e = e.clone();
    e.message = e.message.replace("$.params", "$");
    for (_, v) in e.metadata.iter_mut() {
        if let Some(rest) = v.strip_prefix("$.params") {
            *v = format!("${rest}");
        }
    }
    let e = &e;
    let status = StatusCode::from_u16(e.http_status(table)).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp =
        json_response(status, "application/json", serde_json::to_vec(&e.rest_body(table)).unwrap_or_default());
    decorate_error(&mut resp, e);
    resp
}

/// A path matched against an operation's rules: the operation and the path variables.
pub(super) struct Route {
    op: Operation,
    vars: Vec<(String, String)>,
    body: bool,
    method_ok: bool,
    /// The verbs the path takes (for the `Allow` header of a 405).
    allowed: Vec<&'static str>,
}

pub(super) fn match_template(template: &str, path: &str) -> Option<Vec<(String, String)>> {
    let t: Vec<&str> = template.trim_start_matches('/').split('/').collect();
    let p: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if t.len() != p.len() {
        return None;
    }
    let mut vars = Vec::new();
    for (ts, ps) in t.iter().zip(&p) {
        if let Some(rest) = ts.strip_prefix('{') {
            let (name, suffix) = rest.split_once('}')?;
            let value = ps.strip_suffix(suffix)?;
            if value.is_empty() || (suffix.is_empty() && value.contains(':')) {
                return None;
            }
            vars.push((name.to_owned(), percent_decode(value)));
        } else if ts != ps {
            return None;
        }
    }
    Some(vars)
}

pub(super) fn find_route(method: &Method, path: &str) -> Option<Route> {
    let mut found: Option<Route> = None;
    let mut allowed: Vec<&'static str> = Vec::new();
    for op in Operation::ALL {
        for rule in op.http() {
            let Some(vars) = match_template(rule.path, path) else { continue };
            // The verbs come from the generated table (rules/a2a.toml adds POST to `:subscribe`).
            let m = rule.method.eq_ignore_ascii_case(method.as_str());
            let route = Route { op, vars, body: rule.body, method_ok: m, allowed: Vec::new() };
            if m {
                return Some(route);
            }
            let verb = match rule.method {
                "get" => "GET",
                "post" => "POST",
                "delete" => "DELETE",
                "put" => "PUT",
                "patch" => "PATCH",
                _ => continue,
            };
            if !allowed.contains(&verb) {
                allowed.push(verb);
            }
            found.get_or_insert(route);
        }
    }
    found.map(|mut r| {
        allowed.sort_unstable();
        r.allowed = allowed;
        r
    })
}

/// The request object of a call without a body: path variables and query parameters,
/// each typed by the request field it fills.
pub(super) fn query_object(op: Operation, vars: &[(String, String)], query: Option<&str>) -> Map<String, Value> {
    let mut obj = Map::new();
    for (k, v) in vars {
        if k != "tenant" {
            obj.insert(lower_camel(k), Value::String(v.clone()));
        }
    }
    let fields = op.query_fields();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (k, v) = (percent_decode(k), percent_decode(v));
        let key = lower_camel(&k);
        let Some((name, kind)) = fields.iter().find(|(n, _)| *n == key) else { continue };
        // A value the query form cannot make typed is left a string, for the request's
        // decoder to refuse as it would in a body (with its path, kind, expected, found):
        // an integer may be a string in ProtoJSON, so `pageSize=10` reads as 10.
        let value = match kind {
            QueryKind::Int => Value::String(v.clone()),
            QueryKind::Bool if QUERY_TRUE.contains(&v.as_str()) => Value::Bool(true),
            QueryKind::Bool if QUERY_FALSE.contains(&v.as_str()) => Value::Bool(false),
            QueryKind::Bool => Value::String(v.clone()),
            // An enum may be given by its proto number, as in a body (`status=2`).
            QueryKind::Enum => match v.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => Value::String(v.clone()),
            },
            QueryKind::String | QueryKind::Timestamp => Value::String(v.clone()),
        };
        obj.insert((*name).to_owned(), value);
    }
    obj
}

pub(super) async fn rest<E: AgentExecutor>(State(app): State<Arc<App<E>>>, req: HttpRequest) -> Response {
    let table = app.options.error_table;
    let (parts, body) = req.into_parts();
    let path = parts.uri.path();
    let prefix = app.options.rest_prefix.trim_end_matches('/');
    let Some(rel) = path.strip_prefix(prefix).filter(|r| r.starts_with('/')) else {
        return rest_error(
            &A2aError::new(ErrorKind::MethodNotFound).with_message(format!("no route for {path}")),
            table,
        );
    };
    let Some(route) = find_route(&parts.method, rel) else {
        return rest_error(
            &A2aError::new(ErrorKind::MethodNotFound).with_message(format!("no A2A operation at {path}")),
            table,
        );
    };
    if !route.method_ok {
        let allow = route.allowed.join(", ");
        let mut r = rest_error(
            &A2aError::new(ErrorKind::MethodNotAllowed)
                .with_message(format!("{} is not allowed on {path} (allowed: {allow})", parts.method))
                .with("allow", allow.clone()),
            table,
        );
        if let Ok(v) = HeaderValue::from_str(&allow) {
            r.headers_mut().insert(http::header::ALLOW, v);
        }
        return r;
    }
    let query = parts.uri.query().map(str::to_owned);
    match version(&app.calls, &parts.headers, query.as_deref(), Binding::Rest) {
        Ok(Version::V1) => {}
        Ok(Version::V03) => return rest_error(&v03_refused(Binding::Rest, ""), table),
        Err(e) => return rest_error(&e, table),
    }
    let body = match read_body(&app, &parts.headers, body).await {
        Ok(b) => b,
        Err(e) => return rest_error(&e, table),
    };
    if let Err(e) = check_depth(&body, 0) {
        return rest_error(&e, table);
    }
    let op = route.op;
    let path_tenant = route.vars.iter().find(|(k, _)| k == "tenant").map(|(_, v)| v.clone());
    let bytes: Vec<u8> =
        if route.body && parts.method == Method::POST && !(op == Operation::SubscribeToTask && body.is_empty()) {
            if !content_type_ok(&parts.headers) {
                return rest_error(
                    &A2aError::new(ErrorKind::InvalidRequest)
                        .with_message("Content-Type must be application/a2a+json or application/json"),
                    table,
                );
            }
            let vars: Vec<_> = route.vars.iter().filter(|(k, _)| k != "tenant").collect();
            if vars.is_empty() {
                body.to_vec()
            } else {
                let mut obj = if body.is_empty() {
                    Map::new()
                } else {
                    match serde_json::from_slice::<Value>(&body) {
                        Ok(Value::Object(o)) => o,
                        Ok(_) => {
                            return rest_error(
                                &A2aError::new(ErrorKind::InvalidParams)
                                    .with_message("the request body must be a JSON object")
                                    .with("path", "$"),
                                table,
                            )
                        }
                        Err(e) => {
                            return rest_error(
                                &A2aError::new(ErrorKind::Parse)
                                    .with_message(format!("the request body is not JSON: {e}")),
                                table,
                            )
                        }
                    }
                };
                for (k, v) in vars {
                    obj.insert(lower_camel(k), Value::String(v.clone()));
                }
                serde_json::to_vec(&obj).unwrap_or_default()
            }
        } else {
            serde_json::to_vec(&query_object(op, &route.vars, query.as_deref())).unwrap_or_default()
        };
    let request = match Request::decode(op, &bytes, "$") {
        Ok(d) => d.value,
        Err(e) => {
            let err = if serde_json::from_slice::<serde::de::IgnoredAny>(&bytes).is_err() {
                A2aError::new(ErrorKind::Parse).with_message(e.to_string())
            } else {
                A2aError::invalid_params(&e)
            };
            return rest_error(&err, table);
        }
    };
    let cx = match call_context(&app, &parts, path_tenant.as_deref(), request.tenant()) {
        Ok(cx) => cx,
        Err(e) => return rest_error(&e, table),
    };
    match app.core.handle(cx, request).await {
        Ok(Answer::Value(reply)) => match reply.to_json_spliced() {
            Ok(result) => match result.into_plain() {
                Ok(bytes) => json_response(StatusCode::OK, A2A_JSON, bytes),
                Err(spliced) => {
                    let body = axum::body::Body::new(spliced);
                    (StatusCode::OK, [(http::header::CONTENT_TYPE, A2A_JSON)], body).into_response()
                }
            },
            Err(e) => rest_error(&e, table),
        },
        Ok(Answer::Stream(events)) => sse(&app, &parts, events, move |item| match item {
            StreamOut::Event { seq, body, .. } => Some(match body.bytes() {
                Ok(body) => frame(seq, None, &body),
                Err(e) => frame(None, Some("error"), rest_error_text(&A2aError::from(e), table).as_bytes()),
            }),
            StreamOut::Gap { after, resumed_at } => {
                Some(frame(None, Some("gap"), json!({"after": after, "resumedAt": resumed_at}).to_string().as_bytes()))
            }
            StreamOut::Lagged => Some(frame(None, Some("lagged"), b"{}")),
            StreamOut::Error(e) => Some(frame(None, Some("error"), rest_error_text(&e, table).as_bytes())),
        })
        .await
        .unwrap_or_else(|e| rest_error(&e, table)),
        Err(e) => rest_error(&e, table),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_the_generated_rules() {
        let r = find_route(&Method::POST, "/tasks/t-1:cancel").unwrap();
        assert_eq!(r.op, Operation::CancelTask);
        assert_eq!(r.vars, vec![("id".to_owned(), "t-1".to_owned())]);
        let r = find_route(&Method::GET, "/acme/tasks/t-1:subscribe").unwrap();
        assert_eq!(r.op, Operation::SubscribeToTask);
        assert_eq!(r.vars[0], ("tenant".to_owned(), "acme".to_owned()));
        assert!(find_route(&Method::POST, "/tasks/t-1:subscribe").unwrap().method_ok);
        assert_eq!(find_route(&Method::GET, "/tasks/t-1").unwrap().op, Operation::GetTask);
        assert_eq!(find_route(&Method::GET, "/tasks").unwrap().op, Operation::ListTasks);
        assert_eq!(
            find_route(&Method::DELETE, "/tasks/t/pushNotificationConfigs/c").unwrap().op,
            Operation::DeleteTaskPushNotificationConfig
        );
        let wrong = find_route(&Method::DELETE, "/message:send").unwrap();
        assert!(!wrong.method_ok);
        assert!(find_route(&Method::GET, "/nothing/here/at/all").is_none());
    }

    #[test]
    fn query_parameters_are_typed_by_their_field() {
        let obj = query_object(
            Operation::ListTasks,
            &[],
            Some("pageSize=5&includeArtifacts=true&status=TASK_STATE_WORKING&context_id=c%201"),
        );
        assert_eq!(
            Value::Object(obj),
            json!({"pageSize": "5", "includeArtifacts": true, "status": "TASK_STATE_WORKING", "contextId": "c 1"})
        );
        let obj = query_object(Operation::ListTasks, &[], Some("status=2"));
        assert_eq!(Value::Object(obj), json!({"status": 2}));
    }

    #[test]
    fn a_query_value_of_the_wrong_form_is_refused_by_the_decoder_as_in_a_body() {
        for (query, path, kind) in [
            ("pageSize=ten", "$.pageSize", "out-of-range"),
            ("includeArtifacts=maybe", "$.includeArtifacts", "wrong-type"),
        ] {
            let obj = query_object(Operation::ListTasks, &[], Some(query));
            let bytes = serde_json::to_vec(&obj).unwrap();
            let Err(e) = Request::decode(Operation::ListTasks, &bytes, "$") else { panic!("{query} decoded") };
            assert_eq!((e.path.as_str(), e.kind.as_str()), (path, kind), "{query}");
        }
    }
}
