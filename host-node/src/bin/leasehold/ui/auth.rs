//! Who may use the dashboard.
//!
//! - Without a token it listens on loopback only (starting elsewhere is
//!   refused), and answers only requests whose `Host` names a loopback
//!   address, so a web page elsewhere cannot reach it through a DNS name
//!   rebound to 127.0.0.1.
//! - With a token, every request carries it: `Authorization: Bearer TOKEN`,
//!   or the cookie a browser gets from opening `/?token=TOKEN` once
//!   (HttpOnly, SameSite=Strict). A wrong or missing one is 401.
//! - A POST (an action) also carries the header `X-Leasehold-Action`, which a
//!   form on another site cannot send, and no `Origin` but this server's.

use super::Ui;
use crate::fail::CliError;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;

/// The cookie that carries the token (hex of its bytes, so any token fits).
const COOKIE: &str = "leasehold_ui_token";
/// The header an action must carry.
pub const ACTION_HEADER: &str = "x-leasehold-action";

/// The access rules of one server.
#[derive(Debug)]
pub struct Access {
    token: Option<String>,
}

impl Access {
    /// The rules for listening on `listen` with `token`.
    ///
    /// # Errors
    /// A non-loopback address without a token; an empty token.
    pub fn new(listen: SocketAddr, token: Option<String>) -> Result<Access, CliError> {
        match &token {
            Some(t) if t.trim().is_empty() => {
                Err(CliError::input("--token (or LEASEHOLD_UI_TOKEN) is empty or blank: give a secret, or leave it out on loopback"))
            }
            // An Authorization header's value loses its surrounding whitespace on the
            // way, so such a token could never be given there.
            Some(t) if t.trim() != t => {
                Err(CliError::input("--token (or LEASEHOLD_UI_TOKEN) begins or ends with whitespace, which an Authorization header can not carry: give it without"))
            }
            None if !listen.ip().is_loopback() => Err(CliError::input(format!(
                "--listen {listen} is not a loopback address: anyone who can reach it could read and steer the queue, \
                 so it needs --token (or LEASEHOLD_UI_TOKEN); nothing was started"
            ))),
            _ => Ok(Access { token }),
        }
    }

    /// Whether `headers` carry the token (always, without one).
    fn admits(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.token else { return true };
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            // An authentication scheme's name is matched whatever its case
            // (RFC 9110, 11.1): `bearer TOKEN` is as good as `Bearer TOKEN`.
            .and_then(|(scheme, given)| scheme.eq_ignore_ascii_case("bearer").then_some(given));
        if bearer.is_some_and(|given| same(given.as_bytes(), token.as_bytes())) {
            return true;
        }
        cookie(headers).is_some_and(|given| same(&given, token.as_bytes()))
    }
}

/// Checks every request against the rules; a `?token=` that matches sets
/// the cookie and sends the browser to the same page without it.
pub async fn check(State(ui): State<Ui>, request: Request, next: Next) -> Response {
    let access = &ui.access;
    let headers = request.headers();
    if access.token.is_none() && !loopback_host(headers) {
        return refuse(StatusCode::FORBIDDEN, "this dashboard answers on its loopback address only");
    }
    if let (Some(token), Some(given)) = (&access.token, query_token(&request)) {
        if request.method() == Method::GET && same(given.as_bytes(), token.as_bytes()) {
            let cookie = format!("{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict", hex(token.as_bytes()));
            // No fragment of its own: the browser keeps the one of the address
            // opened (a shared link to #/jobs/42 lands on job 42).
            let to = without_token(request.uri());
            return Response::builder()
                .status(StatusCode::SEE_OTHER)
                .header(header::LOCATION, to)
                .header(header::SET_COOKIE, cookie)
                .body(Body::empty())
                .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response());
        }
        return unauthorized(&request);
    }
    if !access.admits(headers) {
        return unauthorized(&request);
    }
    if request.method() == Method::POST && !action_allowed(headers) {
        return refuse(StatusCode::FORBIDDEN, "an action needs the X-Leasehold-Action header and this server's origin");
    }
    next.run(request).await
}

/// 401: a page with a token field for a browser, JSON for the API.
fn unauthorized(request: &Request) -> Response {
    if request.uri().path().starts_with("/api/") || request.uri().path() == "/metrics" {
        return refuse(StatusCode::UNAUTHORIZED, "a wrong or missing token: send Authorization: Bearer TOKEN");
    }
    let page = "<!doctype html><meta charset=utf-8><title>leasehold: token needed</title>\
        <body style=\"font:16px system-ui;margin:3em\"><h1>This dashboard needs its token</h1>\
        <p>The token was missing or wrong. Enter the one <code>leasehold ui</code> was started with:</p>\
        <form method=get action=/><input name=token type=password autofocus size=40> <button>Open</button></form>";
    (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response()
}

fn refuse(status: StatusCode, why: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "error": why }))).into_response()
}

/// The `token` parameter of the query string, decoded.
fn query_token(request: &Request) -> Option<String> {
    let query = axum::extract::Query::<std::collections::HashMap<String, String>>::try_from_uri(request.uri()).ok()?;
    query.0.get("token").cloned()
}

/// Where a login (`?token=` that matched) sends the browser: the same path
/// with the same query string less its `token` parameters, each other
/// parameter kept as it was written and in its place (`/?token=T&queue=mail`
/// goes to `/?queue=mail`; `/?token=T` to `/`).
fn without_token(uri: &axum::http::Uri) -> String {
    let kept: Vec<&str> = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|pair| !pair.is_empty() && query_name(pair) != "token")
        .collect();
    if kept.is_empty() {
        uri.path().to_owned()
    } else {
        format!("{}?{}", uri.path(), kept.join("&"))
    }
}

/// The name of one `name=value` pair of a query string, decoded as
/// `query_token` reads it (`+` is a space, `%74oken` is `token`).
fn query_name(pair: &str) -> String {
    let name = pair.split_once('=').map_or(pair, |(name, _)| name).replace('+', " ");
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%').then(|| name.get(i + 1..i + 3)).flatten().and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The token cookie's bytes, if sent.
fn cookie(headers: &HeaderMap) -> Option<Vec<u8>> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
        .and_then(unhex)
}

/// Whether the `Host` header names a loopback address (or is missing, as
/// for an HTTP/1.0 client on this machine).
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else { return true };
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// An action's request: the custom header, and an `Origin` (when a
/// browser sends one) naming the host the request was sent to.
fn action_allowed(headers: &HeaderMap) -> bool {
    if !headers.contains_key(ACTION_HEADER) {
        return false;
    }
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else { return true };
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
    origin.split_once("://").is_some_and(|(_, rest)| rest == host)
}

/// Compares in time that depends on the lengths only.
fn same(given: &[u8], token: &[u8]) -> bool {
    given.len() == token.len() && given.iter().zip(token).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(*k, v.parse().expect("header value"));
        }
        map
    }

    #[test]
    fn off_loopback_a_token_is_required_and_must_not_be_empty() {
        let open: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let err = format!("{:?}", Access::new(open, None).unwrap_err());
        assert!(err.contains("--listen 0.0.0.0:8080 is not a loopback address") && err.contains("--token"), "{err}");
        assert!(Access::new(open, Some(String::new())).is_err());
        let blank = format!("{:?}", Access::new(open, Some("  ".into())).unwrap_err());
        assert!(blank.contains("is empty or blank"), "{blank}");
        let padded = format!("{:?}", Access::new(open, Some(" s3cret\n".into())).unwrap_err());
        assert!(padded.contains("begins or ends with whitespace"), "{padded}");
        assert!(Access::new(open, Some("s3cret".into())).is_ok());
        assert!(Access::new("[::1]:80".parse().unwrap(), None).is_ok());
    }

    #[test]
    fn the_token_is_taken_from_a_bearer_header_or_the_cookie_and_nothing_else() {
        let access = Access::new("0.0.0.0:1".parse().unwrap(), Some("s3cret;x".into())).unwrap();
        assert!(access.admits(&headers(&[("authorization", "Bearer s3cret;x")])));
        assert!(access.admits(&headers(&[("cookie", &format!("a=b; {COOKIE}={}", hex(b"s3cret;x")))])));
        assert!(!access.admits(&headers(&[("authorization", "Bearer s3cret")])));
        assert!(!access.admits(&headers(&[("cookie", &format!("{COOKIE}={}", hex(b"wrong")))])));
        assert!(!access.admits(&headers(&[("cookie", "leasehold_ui_token=zz")])));
        assert!(!access.admits(&HeaderMap::new()));
    }

    #[test]
    fn the_bearer_scheme_is_matched_whatever_its_case_as_http_says() {
        let access = Access::new("0.0.0.0:1".parse().unwrap(), Some("s3cret".into())).unwrap();
        for value in ["Bearer s3cret", "bearer s3cret", "BEARER s3cret"] {
            assert!(access.admits(&headers(&[("authorization", value)])), "{value}");
        }
        for value in ["Basic s3cret", "Bearers3cret", "bearer  wrong", "s3cret"] {
            assert!(!access.admits(&headers(&[("authorization", value)])), "{value}");
        }
    }

    #[test]
    fn a_login_keeps_every_parameter_of_the_address_but_the_token() {
        let to = |uri: &str| without_token(&uri.parse().unwrap());
        assert_eq!(to("/?token=s3cret"), "/");
        assert_eq!(to("/"), "/");
        assert_eq!(to("/?token=s3cret&queue=mail"), "/?queue=mail");
        assert_eq!(to("/?queue=mail&token=s3cret&state=dead&q=a%20b+c"), "/?queue=mail&state=dead&q=a%20b+c");
        assert_eq!(to("/?job=42&token=a&token=b"), "/?job=42");
        // The token as the query reader decodes its name, and nothing that only begins like it.
        assert_eq!(to("/?%74oken=s3cret&tokens=2&token2=3&x=token"), "/?tokens=2&token2=3&x=token");
        assert_eq!(to("/other?token=s3cret&&flag"), "/other?flag");
    }

    #[test]
    fn only_loopback_host_names_are_answered_without_a_token() {
        for host in ["127.0.0.1:8080", "localhost:8080", "[::1]:8080", "LOCALHOST"] {
            assert!(loopback_host(&headers(&[("host", host)])), "{host}");
        }
        for host in ["evil.example:8080", "192.168.1.2:8080", "127.0.0.1.evil.example"] {
            assert!(!loopback_host(&headers(&[("host", host)])), "{host}");
        }
    }

    #[test]
    fn an_action_needs_its_header_and_no_foreign_origin() {
        let host = ("host", "127.0.0.1:8080");
        assert!(action_allowed(&headers(&[host, (ACTION_HEADER, "1")])));
        assert!(action_allowed(&headers(&[host, (ACTION_HEADER, "1"), ("origin", "http://127.0.0.1:8080")])));
        assert!(!action_allowed(&headers(&[host, (ACTION_HEADER, "1"), ("origin", "http://evil.example")])));
        assert!(!action_allowed(&headers(&[host])));
    }
}
