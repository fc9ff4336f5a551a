//! The house's layout as rules a test reads from the source: layers point one way (web →
//! domain → limits and store), and no file reaches itself through its imports, however long the
//! way. Read from the `use` lines and the `crate::`/`super::` paths of code (comments are
//! skipped), resolved to the file that holds the module they name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/`, by its module path (`src/domain/links.rs` is `domain::instance`,
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

/// The modules `source` (the file of module `me`) names in its code, resolved to files: the
/// paths of its `use` statements (groups expanded, over as many lines as they take) and the
/// `crate::`, `super::`, `self::` and child-module paths of its other code. A parent's `pub use`
/// of its own child is a re-export, not an import.
fn imports(
    me: &[String],
    source: &str,
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<Vec<String>> {
    let mut named = BTreeSet::new();
    // A file's tests may reach anywhere; the rules are about the code that ships.
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    for statement in statements(code) {
        let paths = match use_tree(&statement) {
            Some((public, tree)) => expand(tree)
                .iter()
                .filter_map(|path| resolve(me, path, modules))
                .filter(|module| !(public && module.len() > me.len() && module.starts_with(me)))
                .collect(),
            None => paths_in(me, &statement, modules)
                .iter()
                .filter_map(|path| resolve(me, path, modules))
                .collect::<Vec<_>>(),
        };
        named.extend(paths.into_iter().filter(|m| m != me && !m.is_empty()));
    }
    named
}

/// The code's lines, trimmed, without comment lines, a `use` statement joined into one line.
fn statements(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for line in code.lines().map(str::trim) {
        if line.starts_with("//") {
            continue;
        }
        if let Some(mut statement) = pending.take() {
            statement.push(' ');
            statement.push_str(line);
            if line.contains(';') {
                out.push(statement);
            } else {
                pending = Some(statement);
            }
        } else if use_tree(line).is_some() && !line.contains(';') {
            pending = Some(line.to_owned());
        } else {
            out.push(line.to_owned());
        }
    }
    out.extend(pending);
    out
}

/// A `use` statement's tree, and whether it is `pub` (of any reach).
fn use_tree(statement: &str) -> Option<(bool, &str)> {
    let at = statement.find("use ")?;
    let head = statement[..at].trim_end();
    if !(head.is_empty() || (head.starts_with("pub") && !head.contains(' '))) {
        return None;
    }
    let tree = &statement[at + 4..];
    Some((!head.is_empty(), tree.split(';').next().unwrap_or(tree)))
}

/// A use tree as the paths it names: `a::{b, c::{d, self}}` is `a::b`, `a::c::d` and `a::c`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        return vec![path.to_owned()];
    };
    let prefix = tree[..open].trim().trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut items = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[from..]);
    let mut out = Vec::new();
    for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty()) {
        for path in expand(item) {
            out.push(match (prefix.is_empty(), path.as_str()) {
                (_, "self") => prefix.to_owned(),
                (true, _) => path,
                (false, _) => format!("{prefix}::{path}"),
            });
        }
    }
    out
}

/// The paths in a line of code that can name a module of ours: those from `crate`, `super` or
/// `self`, and those from a child module of `me`.
fn paths_in(me: &[String], line: &str, modules: &BTreeMap<Vec<String>, PathBuf>) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut rest = line;
    let mut before = ' ';
    while let Some(start) = rest.find(|c: char| ident(c)) {
        let prev = if start == 0 {
            before
        } else {
            rest[..start].chars().next_back().unwrap_or(' ')
        };
        let mut end = start;
        loop {
            end += rest[end..]
                .find(|c: char| !ident(c))
                .unwrap_or(rest.len() - end);
            match rest[end..].strip_prefix("::") {
                Some(r) if r.starts_with(ident) => end += 2,
                _ => break,
            }
        }
        let path = &rest[start..end];
        let first = path.split("::").next().unwrap_or_default();
        let child = || {
            let mut m = me.to_vec();
            m.push(first.to_owned());
            modules.contains_key(&m)
        };
        // `x::crate::` does not occur; `a.send::` is no path of ours.
        if prev != ':'
            && prev != '.'
            && path.contains("::")
            && (matches!(first, "crate" | "super" | "self") || child())
        {
            out.push(path.to_owned());
        }
        before = rest[..end].chars().next_back().unwrap_or(' ');
        rest = &rest[end..];
    }
    out
}

/// The module of ours that a path (from `me`) names: the longest prefix that is a module of its
/// own file; `None` for another crate's path.
fn resolve(
    me: &[String],
    path: &str,
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Vec<String>> {
    let mut segments = path
        .split("::")
        .map(str::trim)
        .take_while(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .peekable();
    let mut module: Vec<String> = match *segments.peek()? {
        "crate" => {
            segments.next();
            Vec::new()
        }
        "self" => {
            segments.next();
            me.to_vec()
        }
        // A file's module is its parent's child: `super` from `a::b` is `a`.
        "super" => {
            let mut base = me.to_vec();
            while segments.next_if_eq(&"super").is_some() {
                base.pop();
            }
            base
        }
        first => {
            let mut child = me.to_vec();
            child.push(first.to_owned());
            if !modules.contains_key(&child) {
                return None;
            }
            me.to_vec()
        }
    };
    module.extend(segments.map(str::to_owned));
    (0..=module.len())
        .rev()
        .map(|n| module[..n].to_vec())
        .find(|m| modules.contains_key(m))
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

/// The circles in `graph`: for every strongly connected component of more than one node
/// (Tarjan's), cycles through it until each of its nodes is on one, each the shortest through
/// its first uncovered node and written with that node again at the end.
fn circles<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Vec<Vec<N>> {
    struct Tarjan<'g, N> {
        graph: &'g BTreeMap<N, BTreeSet<N>>,
        index: BTreeMap<&'g N, usize>,
        low: BTreeMap<&'g N, usize>,
        stack: Vec<&'g N>,
        on_stack: BTreeSet<&'g N>,
        components: Vec<BTreeSet<&'g N>>,
    }
    impl<'g, N: Ord> Tarjan<'g, N> {
        fn visit(&mut self, node: &'g N) {
            let at = self.index.len();
            self.index.insert(node, at);
            self.low.insert(node, at);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.graph.get(node).into_iter().flatten() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = BTreeSet::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack.remove(member);
                    component.insert(member);
                    if member == node {
                        break;
                    }
                }
                self.components.push(component);
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for node in graph.keys() {
        if !tarjan.index.contains_key(node) {
            tarjan.visit(node);
        }
    }

    let mut found = Vec::new();
    for component in tarjan.components.iter().filter(|c| c.len() > 1) {
        let mut covered = BTreeSet::new();
        for &start in component {
            if covered.contains(start) {
                continue;
            }
            // Breadth first from `start` inside the component, back to `start`.
            let mut came_from: BTreeMap<&N, &N> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([start]);
            let mut last = None;
            'search: while let Some(node) = queue.pop_front() {
                for next in graph.get(node).into_iter().flatten() {
                    if next == start {
                        last = Some(node);
                        break 'search;
                    }
                    if component.contains(next) && !came_from.contains_key(next) {
                        came_from.insert(next, node);
                        queue.push_back(next);
                    }
                }
            }
            // A component of two or more nodes has a cycle through each of them.
            let mut cycle = vec![start.clone()];
            let mut node = last.expect("a strongly connected component has a cycle");
            while node != start {
                cycle.push(node.clone());
                node = came_from[node];
            }
            cycle[1..].reverse();
            cycle.push(start.clone());
            covered.extend(component.iter().copied().filter(|n| cycle.contains(*n)));
            found.push(cycle);
        }
    }
    found
}

/// No circle of imports, of any length: no file reaches itself by following what it imports (a
/// parent that declares its children, and only re-exports them, is not counted as importing
/// them: `mod` lines are not paths). A module naming what its own ancestors hold (`super::`, the
/// web layer's `AppState` in `http`) is inside its parent, not beside it: that arrow is not
/// counted either, so a circle is one between modules of which neither holds the other.
#[test]
fn no_file_reaches_itself_through_its_imports() {
    let modules = modules();
    let graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = graph()
        .into_iter()
        .map(|(me, to)| {
            let beside = to
                .into_iter()
                .filter(|other| !(other.len() < me.len() && me.starts_with(other)))
                .collect();
            (me, beside)
        })
        .collect();
    assert!(
        graph.len() > 50,
        "the source was read: {} files",
        graph.len()
    );
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    let circles: Vec<String> = circles(&graph)
        .iter()
        .map(|cycle| {
            cycle
                .iter()
                .map(|m| {
                    let file = &modules[m];
                    file.strip_prefix(src).unwrap_or(file).display().to_string()
                })
                .collect::<Vec<_>>()
                .join(" -> ")
        })
        .collect();
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}

/// The circle finder finds a circle of three, and none where the arrows only converge.
#[test]
fn the_circle_finder_finds_a_circle_of_three_and_no_false_one() {
    let graph = |edges: &[(&'static str, &'static str)]| {
        let mut g: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for &(from, to) in edges {
            g.entry(from).or_default().insert(to);
            g.entry(to).or_default();
        }
        g
    };
    let circle = graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("e", "a")]);
    assert_eq!(circles(&circle), vec![vec!["a", "b", "c", "a"]]);

    let tree = graph(&[("a", "b"), ("b", "c"), ("a", "c"), ("d", "a"), ("d", "c")]);
    assert_eq!(circles(&tree), Vec::<Vec<&str>>::new());
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
        "domain::delivery::answered",
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

/// The reader above finds what it must: a file naming a module through `crate::`, `super::`, a
/// `use` group over several lines and a child's path; a comment naming one is not an import, nor
/// a parent's re-export of its child.
#[test]
fn the_layout_reader_finds_imports_and_skips_comments() {
    let modules = modules();
    let read = |me: &[&str], source: &str| -> BTreeSet<String> {
        let me: Vec<String> = me.iter().map(|s| (*s).to_owned()).collect();
        imports(&me, source, &modules)
            .iter()
            .map(|m| name(m))
            .collect()
    };
    let found = read(
        &["limits", "guard"],
        "use crate::domain::{instance, keys::SiteKeys};\nuse super::flood::Clock;\n// crate::http::front\nfn f() { crate::store::Db::x(); }\nuse crate::{\n    domain::{\n        workflow::{self, Step},\n    },\n    error::Error,\n};\n",
    );
    for expected in [
        "domain::instance",
        "domain::keys",
        "domain::workflow",
        "limits::flood",
        "store",
        "error",
    ] {
        assert!(found.contains(expected), "{expected} in {found:?}");
    }
    assert!(!found.iter().any(|m| m.starts_with("http")), "{found:?}");

    let found = read(
        &["domain", "mail"],
        "pub use compose::Letter;\nfn add(run: &send::Run) {}\n",
    );
    assert_eq!(found, BTreeSet::from(["domain::mail::send".to_owned()]));
}

/// Every text file of the tree, under the folders the app is built and documented from.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text_files(&path, out);
        } else if path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            ["rs", "html", "ftl", "md", "sql", "css", "js", "mjs", "toml"].contains(&e)
        }) {
            out.push(path);
        }
    }
}

/// A merge left half-done compiles when its markers sit in a template or a locale (they are
/// text there): no line of the tree starts with one.
#[test]
fn no_merge_markers_are_left_in_the_tree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "src",
        "templates",
        "locales",
        "docs",
        "migrations",
        "tests",
        "static",
    ] {
        text_files(&root.join(dir), &mut files);
    }
    let markers = ["<<<<<<< ", ">>>>>>> ", "|||||||"];
    let left: Vec<String> = files
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            text.lines()
                .enumerate()
                .filter(|(_, l)| markers.iter().any(|m| l.starts_with(m)))
                .map(|(n, _)| format!("{}:{}", path.display(), n + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(left.is_empty(), "merge markers: {left:?}");
}
