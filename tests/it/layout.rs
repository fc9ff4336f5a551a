//! The house's layout as rules a test reads from the source: layers point one way (web →
//! domain → limits and store), and no file imports a file that imports it back. Read from the
//! `use` lines and the `crate::`/`super::` paths of code (comments are skipped), resolved to the
//! file that holds the module they name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/`, by its module path (`src/domain/links.rs` is `domain::links`,
/// `src/domain/mod.rs` is `domain`, `src/lib.rs` the crate's root).
fn modules() -> BTreeMap<Vec<String>, PathBuf> {
    fn walk(dir: &Path, at: &[String], into: &mut BTreeMap<Vec<String>, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                let mut inner = at.to_vec();
                inner.push(name);
                walk(&path, &inner, into);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut module = at.to_vec();
                if name == "main" {
                    continue;
                }
                if !matches!(name.as_str(), "mod" | "lib") {
                    module.push(name);
                }
                {
                    into.insert(module, path);
                }
            }
        }
    }
    let mut modules = BTreeMap::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut modules,
    );
    modules
}

/// The modules `source` (the file of module `me`) names in its code, resolved to files.
fn imports(
    me: &[String],
    source: &str,
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<Vec<String>> {
    let mut named = BTreeSet::new();
    // A file's tests may reach anywhere; the rules are about the code that ships.
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    for line in code.lines().map(str::trim) {
        if line.starts_with("//") {
            continue;
        }
        for (start, _) in line
            .match_indices("crate::")
            .chain(line.match_indices("super::"))
        {
            // `super::` inside `crate::...::super::` does not occur; `xsuper::` is no path.
            if start > 0 {
                let before = line.as_bytes()[start - 1];
                if before.is_ascii_alphanumeric() || before == b'_' || before == b':' {
                    continue;
                }
            }
            let mut base: Vec<String> = Vec::new();
            let mut rest = &line[start..];
            if let Some(r) = rest.strip_prefix("crate::") {
                rest = r;
            } else {
                // A file's module is its parent's child: `super` from `a::b` is `a`.
                base = me.to_vec();
                while let Some(r) = rest.strip_prefix("super::") {
                    base.pop();
                    rest = r;
                }
            }
            let mut path = base;
            let mut tail = rest;
            loop {
                let end = tail
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                if end == 0 {
                    break;
                }
                path.push(tail[..end].to_owned());
                match tail[end..].strip_prefix("::") {
                    Some(r) => tail = r,
                    None => break,
                }
            }
            // `use crate::a::{b, c}`: each of the group's first names.
            let mut paths = vec![path.clone()];
            if let Some(group) = tail.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or_default();
                for item in group.split(',') {
                    let first = item.trim().split("::").next().unwrap_or_default();
                    if !first.is_empty() && first != "self" {
                        let mut p = path.clone();
                        p.push(first.to_owned());
                        paths.push(p);
                    }
                }
            }
            for p in paths {
                // The longest prefix that is a module of its own file.
                if let Some(module) = (0..=p.len())
                    .rev()
                    .map(|n| p[..n].to_vec())
                    .find(|m| modules.contains_key(m))
                {
                    if module != me && !module.is_empty() {
                        named.insert(module);
                    }
                }
            }
        }
    }
    named
}

fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules = modules();
    modules
        .iter()
        .map(|(me, file)| {
            let source = std::fs::read_to_string(file).unwrap();
            (me.clone(), imports(me, &source, &modules))
        })
        .collect()
}

fn name(module: &[String]) -> String {
    module.join("::")
}

/// No file imports a file that imports it back (a parent that declares its children, and only
/// re-exports them, is not counted as importing them: `mod` lines are not paths).
#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let graph = graph();
    assert!(
        graph.len() > 50,
        "the source was read: {} files",
        graph.len()
    );
    let mut circles = Vec::new();
    for (a, named) in &graph {
        for b in named {
            if a < b && graph.get(b).is_some_and(|back| back.contains(a)) {
                circles.push(format!("{} <-> {}", name(a), name(b)));
            }
        }
    }
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}

/// The web layer (`http`) is on top: nothing below it imports it. The limiter (`limits`) and the
/// store sit below the domain; the store may name the domain's values (an instance's state, a
/// history event, the keys, a token's scope) that its rows are typed by, and nothing else.
#[test]
fn layers_point_one_way() {
    let graph = graph();
    let below_web = [
        "domain", "limits", "store", "config", "error", "i18n", "proxy", "time",
    ];
    let store_may_name = [
        "domain::workflow::state",
        "domain::workflow::history",
        "domain::workflow",
        "domain::keys",
        "domain::api::scope",
        "domain::delivery::topic",
    ];
    let mut wrong = Vec::new();
    for (module, named) in &graph {
        let top = module.first().map(String::as_str).unwrap_or_default();
        for other in named {
            let to = other[0].as_str();
            let bad = (below_web.contains(&top) && to == "http")
                || (top == "limits" && to == "domain")
                || (top == "store"
                    && to == "domain"
                    && !store_may_name.contains(&name(other).as_str()));
            if bad {
                wrong.push(format!("{} -> {}", name(module), name(other)));
            }
        }
    }
    assert!(wrong.is_empty(), "arrows pointing up: {wrong:#?}");
}

/// The reader above finds what it must: a file naming a module through `crate::`, `super::` and a
/// `use` group, and a comment naming one is not an import.
#[test]
fn the_layout_reader_finds_imports_and_skips_comments() {
    let modules = modules();
    let me: Vec<String> = vec!["limits".into(), "guard".into()];
    let source = "use crate::domain::{links, keys::SiteKeys};\nuse super::flood::Clock;\n// crate::http::front\nfn f() { crate::store::Db::x(); }\n";
    let found: BTreeSet<String> = imports(&me, source, &modules)
        .iter()
        .map(|m| name(m))
        .collect();
    for expected in [
        "domain",
        "domain::links",
        "domain::keys",
        "limits::flood",
        "store",
    ] {
        assert!(found.contains(expected), "{expected} in {found:?}");
    }
    assert!(!found.iter().any(|m| m.starts_with("http")), "{found:?}");
}
