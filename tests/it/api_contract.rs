//! The API keeps the contract its OpenAPI description publishes, over real TCP: what
//! schemathesis (`.ci/schemathesis`) found the server and the description disagreeing on, each
//! held here where it can be said in a few requests. Every answer is held to the description
//! (`api::described`, in `call`).

use serde_json::Value;

use crate::api::{START, call, json, token};
use crate::helpers::{Flood, spawn};

fn description() -> Value {
    serde_json::from_str(orchestra::http::api::description()).unwrap()
}

/// A NUL in a field the call does not read is no text of ours: the body is taken, as the
/// description (which says nothing of such fields) allows. One in a text it reads, a map's keys
/// included, is still refused, and the description says so of every such text.
#[tokio::test]
async fn a_nul_is_refused_only_in_what_a_call_reads_as_the_description_says() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let start =
        r#"{"workflow":"contract_review","subject":{"title":"Lease"},"note\u0000":"\u0000"}"#;
    let made = call(&app, "POST", "/api/v1/instances", &t, Some(start)).await;
    assert_eq!(made.status, 201, "{}", made.body);
    let id = json(&made)["id"].as_i64().unwrap();
    let cancel = format!("/api/v1/instances/{id}/cancel");
    for refused in [r#"{"reason":"late\u0000"}"#, r#"{"reason":"late\\\u0000"}"#] {
        let page = call(&app, "POST", &cancel, &t, Some(refused)).await;
        assert_eq!(
            (page.status, json(&page)["field"].as_str()),
            (422, Some("body")),
            "{refused}"
        );
    }
    let with_contacts = r#"{"workflow":"contract_review","subject":{"title":"Lease"},"participants":{"leg\u0000al":{"email":"a@example.org"}}}"#;
    let page = call(&app, "POST", "/api/v1/instances", &t, Some(with_contacts)).await;
    assert_eq!(
        (page.status, json(&page)["field"].as_str()),
        (422, Some("body"))
    );
    // An escaped backslash before `u0000` is no NUL.
    let page = call(&app, "POST", &cancel, &t, Some(r#"{"reason":"C:\\u0000"}"#)).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(json(&page)["state"], "cancelled");

    let doc = description();
    let schemas = &doc["components"]["schemas"];
    let no_nul = orchestra::http::api::NO_NUL;
    for text in [
        &schemas["StartInstance"]["properties"]["workflow"],
        &schemas["StartInstance"]["properties"]["participants"]["propertyNames"],
        &schemas["Subject"]["properties"]["title"],
        &schemas["Contact"]["properties"]["email"],
        &schemas["CancelInstance"]["properties"]["reason"],
        &schemas["IssueLink"]["properties"]["participant"],
        &schemas["CreateWebhook"]["properties"]["events"]["items"],
    ] {
        assert_eq!(text["pattern"], no_nul, "{text}");
    }
    // A text with a list of its own keeps it: it leaves NUL out already.
    assert_eq!(
        schemas["Contact"]["properties"]["lang"]["pattern"],
        "^(en|fr)$"
    );
}

/// JSON Schema's `integer` is any whole number, however it is written: `3600.0` and `3.6e3`
/// are the lifetime `3600`, as a client that writes every number as a float sends it.
#[tokio::test]
async fn a_whole_number_written_as_a_float_is_taken_as_the_description_says() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let made = call(&app, "POST", "/api/v1/instances", &t, Some(START)).await;
    let links = format!("/api/v1/instances/{}/links", json(&made)["id"]);
    for ttl in ["3600.0", "3.6e3", "3600"] {
        let body = format!(r#"{{"participant":"legal","ttl_seconds":{ttl}}}"#);
        let page = call(&app, "POST", &links, &t, Some(&body)).await;
        assert_eq!(page.status, 201, "{ttl}: {}", page.body);
        let issued = json(&page);
        let revoke = format!("{links}/{}", issued["id"]);
        assert_eq!(call(&app, "DELETE", &revoke, &t, None).await.status, 204);
    }
    for ttl in ["3600.5", "-3600", "\"3600\"", "1e300"] {
        let body = format!(r#"{{"participant":"legal","ttl_seconds":{ttl}}}"#);
        let page = call(&app, "POST", &links, &t, Some(&body)).await;
        assert_eq!(
            (page.status, json(&page)["field"].as_str()),
            (422, Some("ttl_seconds")),
            "{ttl}"
        );
    }
}

/// A cursor is taken only as the API wrote it, which is what the description's pattern says:
/// the same id spelt another way (a leading zero, a `+`) is refused as a made-up one is.
#[tokio::test]
async fn a_cursor_is_taken_only_as_the_api_wrote_it_and_the_description_says_how() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    for _ in 0..2 {
        call(&app, "POST", "/api/v1/instances", &t, Some(START)).await;
    }
    let page = call(&app, "GET", "/api/v1/instances?limit=1", &t, None).await;
    let cursor = json(&page)["next_cursor"].as_str().unwrap().to_owned();
    assert!(cursor.starts_with("623"), "{cursor}");
    let next = call(
        &app,
        "GET",
        &format!("/api/v1/instances?cursor={cursor}"),
        &t,
        None,
    )
    .await;
    assert_eq!(next.status, 200);
    let id = String::from_utf8(hex::decode(&cursor).unwrap()).unwrap()[1..].to_owned();
    for other in [
        hex::encode(format!("b0{id}")),
        hex::encode(format!("b+{id}")),
    ] {
        for path in [
            format!("/api/v1/instances?cursor={other}"),
            format!("/api/v1/instances/1?history_cursor={other}"),
        ] {
            let page = call(&app, "GET", &path, &t, None).await;
            assert_eq!(page.status, 422, "{path}: {}", page.body);
        }
    }
    let doc = description();
    for (path, name) in [
        ("/api/v1/instances", "cursor"),
        ("/api/v1/instances/{id}", "history_cursor"),
    ] {
        let parameters = doc["paths"][path]["get"]["parameters"].as_array().unwrap();
        let described = parameters.iter().find(|p| p["name"] == name).unwrap();
        assert_eq!(
            described["schema"]["pattern"],
            orchestra::domain::lists::CURSOR_PATTERN
        );
    }
}

/// An empty query field is the one left out (`?state=` lists every state), and the description
/// says so of every query field (`allowEmptyValue`), rather than refusing what is taken.
#[tokio::test]
async fn an_empty_query_field_is_left_out_as_the_description_says() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let made = call(&app, "POST", "/api/v1/instances", &t, Some(START)).await;
    let id = json(&made)["id"].as_i64().unwrap();
    let page = call(
        &app,
        "GET",
        "/api/v1/instances?limit=&cursor=&workflow=&state=&q=",
        &t,
        None,
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(json(&page)["instances"][0]["id"], id);
    let page = call(
        &app,
        "GET",
        &format!("/api/v1/instances/{id}?history_cursor="),
        &t,
        None,
    )
    .await;
    assert_eq!(page.status, 200, "{}", page.body);

    let doc = description();
    let mut query = 0;
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            let parameters = operation["parameters"].as_array().into_iter().flatten();
            for parameter in parameters.filter(|p| p["in"] == "query") {
                assert_eq!(parameter["allowEmptyValue"], true, "{parameter}");
                query += 1;
            }
        }
    }
    assert_eq!(
        query, 6,
        "limit, cursor, workflow, state, q and history_cursor"
    );
}

/// A search or a workflow name holding a NUL lists nothing, as one no instance matches: on
/// PostgreSQL too, which cannot be asked about such text (it was a `422` there, a `200` on
/// SQLite, for a query the description takes).
#[tokio::test]
async fn a_query_text_holding_a_nul_lists_nothing_on_either_database() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    call(&app, "POST", "/api/v1/instances", &t, Some(START)).await;
    for query in [
        "q=Le%00ase",
        "workflow=contract_review%00",
        "q=%00&workflow=%00",
    ] {
        let page = call(&app, "GET", &format!("/api/v1/instances?{query}"), &t, None).await;
        assert_eq!(page.status, 200, "{query}: {}", page.body);
        assert_eq!(json(&page)["instances"], serde_json::json!([]), "{query}");
    }
    let page = call(&app, "GET", "/api/v1/instances?q=Lease", &t, None).await;
    assert_eq!(json(&page)["instances"].as_array().unwrap().len(), 1);
}

/// A body is a JSON object, as the description says: serde would read a struct from an array
/// too, so `[null]` cancelled an instance as `{"reason": null}` does. Now it is the body's `422`,
/// on every call that takes one, and the instance is left as it was.
#[tokio::test]
async fn a_body_that_is_an_array_is_refused_not_read_as_the_object() {
    let app = spawn(Flood::Memory).await;
    let t = token(&app, "crm", None, None).await;
    let made = call(&app, "POST", "/api/v1/instances", &t, Some(START)).await;
    let instance = format!("/api/v1/instances/{}", json(&made)["id"]);
    for (path, body) in [
        (format!("{instance}/cancel"), "[null]"),
        (format!("{instance}/cancel"), " [\"late\"]"),
        (format!("{instance}/links"), r#"["legal", 3600]"#),
        (
            "/api/v1/instances".to_owned(),
            r#"["contract_review", {"title": "Lease"}]"#,
        ),
        (
            "/api/v1/webhooks".to_owned(),
            r#"["https://example.org/hook"]"#,
        ),
    ] {
        let page = call(&app, "POST", &path, &t, Some(body)).await;
        assert_eq!(
            (page.status, json(&page)["field"].as_str()),
            (422, Some("body")),
            "{path} {body}: {}",
            page.body
        );
    }
    let page = call(&app, "GET", &instance, &t, None).await;
    assert_eq!(json(&page)["state"], "active");
}
