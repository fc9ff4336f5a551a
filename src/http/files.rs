//! A stored file as a download, the one answer every route that offers a file gives (the
//! doorway under a link, the admin instance page, the API): always an attachment under the name
//! it was kept as, typed by what its content is, never sniffed by the browser, and sandboxed
//! should a browser render it anyway. Its bytes stream out a chunk at a time.

use axum::body::Body;
use axum::http::HeaderValue;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_LENGTH, CONTENT_SECURITY_POLICY, CONTENT_TYPE,
    X_CONTENT_TYPE_OPTIONS,
};
use axum::response::{IntoResponse, Response};

use crate::store::Db;
use crate::store::files::{self, FileRow};

/// A downloaded file may not run, load or be framed, whatever it is.
const SANDBOX: &str = "sandbox; default-src 'none'; frame-ancestors 'none'";

/// The file as a download.
pub fn serve(db: &Db, file: FileRow) -> Response {
    let db = db.clone();
    let id = file.id;
    let chunks = futures_util::stream::unfold(0i64, move |seq| {
        let db = db.clone();
        async move {
            match files::chunk(&db, id, seq).await {
                Ok(Some(data)) => Some((Ok(axum::body::Bytes::from(data)), seq + 1)),
                Ok(None) => None,
                Err(e) => {
                    tracing::warn!(error = %e, file = id, "a download was cut off: the database failed");
                    Some((Err(e), i64::MAX))
                }
            }
        }
    });
    let mut response = Body::from_stream(chunks).into_response();
    let headers = response.headers_mut();
    let media_type = HeaderValue::from_str(&file.media_type)
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    headers.insert(CONTENT_TYPE, media_type);
    headers.insert(CONTENT_LENGTH, HeaderValue::from(file.size.max(0) as u64));
    if let Ok(disposition) = HeaderValue::from_str(&disposition(&file.name)) {
        headers.insert(CONTENT_DISPOSITION, disposition);
    }
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(SANDBOX));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    response
}

/// `attachment` with the name twice (RFC 6266): an ASCII `filename` for old clients, and the
/// name itself as `filename*` in UTF-8 (RFC 8187).
pub fn disposition(name: &str) -> String {
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_name_is_given_twice_plain_and_in_utf8() {
        assert_eq!(
            super::disposition("reçu été.pdf"),
            "attachment; filename=\"re_u _t_.pdf\"; filename*=UTF-8''re%C3%A7u%20%C3%A9t%C3%A9.pdf"
        );
        assert_eq!(
            super::disposition("a\"b\\c.txt"),
            "attachment; filename=\"a_b_c.txt\"; filename*=UTF-8''a%22b%5Cc.txt"
        );
    }
}
