//! The page's files, embedded in the binary (hand-written HTML, CSS and
//! JavaScript; the charts are SVG drawn by the script): nothing is fetched
//! from anywhere else, and nothing is built.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("assets/index.html");
/// The other files by name: `(name, content type, text)`.
pub const FILES: &[(&str, &str, &str)] = &[
    ("app.js", "text/javascript; charset=utf-8", include_str!("assets/app.js")),
    ("app.css", "text/css; charset=utf-8", include_str!("assets/app.css")),
    ("icon.svg", "image/svg+xml", include_str!("assets/icon.svg")),
];

/// Only this server's own files and connections; no inline script.
const POLICY: &str = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

fn answer(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// `GET /`: the page.
pub async fn index() -> Response {
    answer("text/html; charset=utf-8", INDEX)
}

/// `GET /assets/{name}`.
pub async fn asset(Path(name): Path<String>) -> Response {
    match FILES.iter().find(|(file, ..)| *file == name) {
        Some((_, content_type, body)) => answer(content_type, body),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}
