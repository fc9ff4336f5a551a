//! A workflow's flow drawn as an SVG made on the server: one box per step, top to bottom, each
//! with its number, kind, title in the reader's language, who answers it and its marks (a
//! condition, k of n, a deadline); arrows between consecutive steps, a dashed bypass around a
//! step that a condition may skip, and an end. Given where an instance stands, the steps before
//! it are marked done (or skipped), its step current, and an ended instance's end state shown.
//!
//! The drawing is an image to assistive technology (`role="img"`): its `<title>` names it and
//! its `<desc>` says the same flow in words, with every title in full where a box cuts it
//! short. Everything a definition's author typed is escaped. Colours come from the site's CSS
//! (`svg.flow …` in static/style.css) over plain presentation attributes, so the drawing reads
//! without the stylesheet too and needs no inline style, which the site's CSP forbids.
//!
//! **Other edges.** `Flow::edges` draws extra arrows, curved on the right side, from a step to
//! another step (before or after it, or itself) or to the end, each with a label written in the
//! box it leaves ("on reject → step 1") and in the words. A definition's routes become edges
//! where the page builds its `Flow`: one `Edge { from, to, label }` per route, `from` and
//! `Target::Step` 0-based, the label already in the reader's language.

use std::fmt::Write;

use super::{Definition, InstanceState, Step, condition};
use crate::i18n::{Lang, tr};

/// Where an instance stands: its step, its state, and the steps it skipped that it knows of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    pub step: usize,
    pub state: InstanceState,
    pub skipped: Vec<usize>,
}

pub use super::route::Target;

/// A definition's routes as edges, labelled in `lang`: a form's `if`, then `on approve`, then
/// `on reject`, as a step's line writes them.
pub fn route_edges(definition: &Definition, lang: Lang) -> Vec<Edge> {
    let mut edges = Vec::new();
    for (from, step) in definition.steps.iter().enumerate() {
        let routes = &step.routes;
        for when in &routes.when {
            let conditions = condition::to_text(&when.conditions, &definition.steps);
            edges.push(Edge {
                from,
                to: when.target,
                label: tr(lang, "drawing-route-if", &[("conditions", &conditions)]),
            });
        }
        if let Some(to) = routes.on_approve {
            let label = tr(lang, "drawing-route-approve", &[]);
            edges.push(Edge { from, to, label });
        }
        if let Some(to) = routes.on_reject {
            let label = tr(lang, "drawing-route-reject", &[]);
            edges.push(Edge { from, to, label });
        }
    }
    edges
}

/// An arrow besides the flow from one step to the next, such as a route back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: usize,
    pub to: Target,
    pub label: String,
}

/// What to draw.
pub struct Flow<'a> {
    pub definition: &'a Definition,
    pub lang: Lang,
    /// The workflow's label, for the drawing's title.
    pub name: &'a str,
    /// The prefix of the drawing's element ids, unique on its page.
    pub id: &'a str,
    pub standing: Option<&'a Standing>,
    pub edges: &'a [Edge],
}

/// A step's place in an instance's course.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    Done,
    Skipped,
    Current,
    EndedHere(InstanceState),
    Ahead,
}

impl Mark {
    fn class(self) -> &'static str {
        match self {
            Mark::Done => "done",
            Mark::Skipped => "skipped",
            Mark::Current => "current",
            Mark::EndedHere(_) => "ended",
            Mark::Ahead => "ahead",
        }
    }

    fn message_id(self) -> Option<&'static str> {
        Some(match self {
            Mark::Done => "drawing-done",
            Mark::Skipped => "drawing-skipped",
            Mark::Current => "drawing-current",
            Mark::EndedHere(InstanceState::Rejected) => "drawing-ended-rejected",
            Mark::EndedHere(InstanceState::Expired) => "drawing-ended-expired",
            Mark::EndedHere(_) => "drawing-ended-cancelled",
            Mark::Ahead => return None,
        })
    }
}

/// The drawing's width in its own units; it scales to its column. At 390 px wide the column
/// is about 340 px, so 13 units stay above 12 px.
const WIDTH: u32 = 360;
const BOX_LEFT: u32 = 28;
const BOX_RIGHT: u32 = 322;
const CENTRE: u32 = (BOX_LEFT + BOX_RIGHT) / 2;
const PAD: u32 = 10;
const GAP: u32 = 30;
const TOP: u32 = 8;
const SMALL: u32 = 13;
const BIG: u32 = 14;
/// The x of a bypass's vertical, in the left margin.
const BYPASS_X: u32 = 12;

/// One line of text in a box.
struct Line {
    class: &'static str,
    text: String,
    size: u32,
}

/// A step's box, laid out.
struct Placed {
    top: u32,
    height: u32,
}

impl Flow<'_> {
    /// The drawing as an inline `<svg>` element.
    pub fn svg(&self) -> String {
        let steps = &self.definition.steps;
        let count = steps.len();
        let mut body = String::new();
        let mut words: Vec<String> = Vec::new();
        let mut placed: Vec<Placed> = Vec::with_capacity(count);
        let mut y = TOP;
        for (i, step) in steps.iter().enumerate() {
            let mark = self.mark(i);
            let lines = self.lines(i, step, mark);
            let height = PAD + lines.iter().map(|l| l.size + 5).sum::<u32>() + PAD / 2;
            self.draw_box(&mut body, i, mark, y, height, &lines);
            words.push(self.words(i, step, mark));
            placed.push(Placed { top: y, height });
            y += height + GAP;
        }
        let end_top = y;
        let end_height = 28;
        let (end_text, end_class) = self.end();
        words.push(match self.standing {
            Some(s) if s.state.is_over() => format!("{end_text}."),
            _ => tr(self.lang, "drawing-words-end", &[]),
        });
        // Arrows under the boxes' text: drawn after the boxes but in the gaps between them.
        for (i, p) in placed.iter().enumerate() {
            let to = placed.get(i + 1).map_or(end_top, |n| n.top);
            let _ = write!(
                body,
                r##"<path class="flow-arrow" d="M{CENTRE} {} V{}" stroke="#5b6472" stroke-width="1.5" fill="none" marker-end="url(#{}-arrow)"/>"##,
                p.top + p.height,
                to - 2,
                self.id
            );
            if !steps[i].only_if.is_empty() {
                let above = p.top - GAP / 2;
                let below = p.top + p.height + GAP / 2;
                let _ = write!(
                    body,
                    r##"<path class="flow-bypass" d="M{CENTRE} {above} H{r} Q{BYPASS_X} {above} {BYPASS_X} {a2} V{b2} Q{BYPASS_X} {below} {r} {below} H{h}" stroke="#5b6472" stroke-width="1.5" stroke-dasharray="5 4" fill="none" marker-end="url(#{id}-arrow)"/>"##,
                    r = BYPASS_X + 8,
                    a2 = above + 8,
                    b2 = below - 8,
                    h = CENTRE - 3,
                    id = self.id
                );
            }
        }
        self.draw_edges(&mut body, &placed, end_top + end_height / 2);
        let end_width = (text_width(&end_text, SMALL, false) + (2 * PAD) as f32).ceil() as u32;
        let end_left = CENTRE.saturating_sub(end_width / 2);
        let _ = write!(
            body,
            r##"<g class="flow-end{end_class}"><rect x="{end_left}" y="{end_top}" width="{end_width}" height="{end_height}" rx="14" fill="#eef2f8" stroke="#8a94a3"/><text x="{CENTRE}" y="{}" font-size="{SMALL}" text-anchor="middle" fill="#1d2430">{}</text></g>"##,
            end_top + 19,
            esc(&end_text)
        );
        let height = end_top + end_height + TOP;
        let title = match self.standing {
            Some(_) => tr(self.lang, "drawing-title-instance", &[("name", self.name)]),
            None => tr(
                self.lang,
                "drawing-title",
                &[("name", self.name), ("count", &count.to_string())],
            ),
        };
        let id = self.id;
        format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" class="flow" id="{id}" role="img" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" aria-labelledby="{id}-title" aria-describedby="{id}-desc"><title id="{id}-title">{}</title><desc id="{id}-desc">{}</desc><defs><marker id="{id}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#5b6472"/></marker></defs>{body}</svg>"##,
            esc(&title),
            esc(&words.join(" "))
        )
    }

    fn mark(&self, i: usize) -> Mark {
        let Some(s) = self.standing else {
            return Mark::Ahead;
        };
        let passed = if s.skipped.contains(&i) {
            Mark::Skipped
        } else {
            Mark::Done
        };
        match s.state {
            InstanceState::Complete => passed,
            _ if i < s.step => passed,
            InstanceState::Active if i == s.step => Mark::Current,
            state if i == s.step => Mark::EndedHere(state),
            _ => Mark::Ahead,
        }
    }

    /// The end's words and its class: the state an ended instance reached.
    fn end(&self) -> (String, String) {
        match self.standing {
            Some(s) if s.state.is_over() => (
                tr(
                    self.lang,
                    "drawing-end-state",
                    &[("state", &tr(self.lang, s.state.message_id(), &[]))],
                ),
                format!(" reached {}", s.state.as_str()),
            ),
            _ => (tr(self.lang, "drawing-end", &[]), String::new()),
        }
    }

    /// A step's marks in words: who answers it, its condition, k of n, its deadline, its
    /// edges.
    fn marks(&self, step: &Step) -> Vec<(&'static str, String)> {
        let lang = self.lang;
        let who: Vec<&str> = step.participants().iter().map(|p| p.as_str()).collect();
        let mut marks = vec![(
            "flow-who",
            tr(lang, "drawing-by", &[("who", &who.join(", "))]),
        )];
        if !step.only_if.is_empty() {
            let and = format!(" {} ", tr(lang, "drawing-and", &[]));
            let condition = step
                .only_if
                .iter()
                .map(|c| condition::to_text(std::slice::from_ref(c), &self.definition.steps))
                .collect::<Vec<_>>()
                .join(&and);
            marks.push((
                "flow-condition",
                tr(lang, "drawing-only-if", &[("condition", &condition)]),
            ));
        }
        if who.len() > 1 {
            marks.push((
                "flow-quorum",
                tr(
                    lang,
                    "drawing-quorum",
                    &[
                        ("needed", &step.needed().to_string()),
                        ("count", &who.len().to_string()),
                    ],
                ),
            ));
        }
        if let Some(e) = &step.expires {
            let after = duration(lang, e.after);
            let text = match &e.then_to {
                Some(who) => tr(
                    lang,
                    "drawing-deadline-to",
                    &[("after", &after), ("participant", who.as_str())],
                ),
                None if e.then_next => tr(lang, "drawing-deadline-next", &[("after", &after)]),
                None => tr(lang, "drawing-deadline", &[("after", &after)]),
            };
            marks.push(("flow-deadline", text));
        }
        if step.forward {
            marks.push(("flow-deadline", tr(lang, "drawing-forward", &[])));
        }
        marks
    }

    fn edge_marks(&self, i: usize) -> Vec<String> {
        self.edges
            .iter()
            .filter(|e| e.from == i)
            .map(|e| match e.to {
                Target::Step(to) => tr(
                    self.lang,
                    "drawing-route",
                    &[("label", &e.label), ("to", &(to + 1).to_string())],
                ),
                Target::End => tr(self.lang, "drawing-route-end", &[("label", &e.label)]),
            })
            .collect()
    }

    fn lines(&self, i: usize, step: &Step, mark: Mark) -> Vec<Line> {
        let inner = (BOX_RIGHT - BOX_LEFT - 2 * PAD) as f32;
        let kind = tr(self.lang, step.interaction.message_id(), &[]);
        // The number and kind on the left, the step's place in the instance on the right.
        let place = mark.message_id().map(|id| tr(self.lang, id, &[]));
        let head_room = inner
            - place
                .as_deref()
                .map_or(0.0, |p| text_width(p, SMALL, true) + 8.0);
        let mut lines = fit(&format!("{} · {kind}", i + 1), head_room, SMALL, false, 1)
            .into_iter()
            .map(|text| Line {
                class: "flow-head",
                text,
                size: SMALL,
            })
            .collect::<Vec<_>>();
        for text in fit(step.title_in(self.lang), inner, BIG, true, 2) {
            lines.push(Line {
                class: "flow-title",
                text,
                size: BIG,
            });
        }
        let marks = self.marks(step).into_iter().chain(
            self.edge_marks(i)
                .into_iter()
                .map(|text| ("flow-edge", text)),
        );
        for (class, text) in marks {
            let most = if class == "flow-who" { 2 } else { 1 };
            for text in fit(&text, inner, SMALL, false, most) {
                lines.push(Line {
                    class,
                    text,
                    size: SMALL,
                });
            }
        }
        lines
    }

    fn draw_box(
        &self,
        out: &mut String,
        i: usize,
        mark: Mark,
        top: u32,
        height: u32,
        lines: &[Line],
    ) {
        let _ = write!(
            out,
            r##"<g class="flow-step {}" data-step="{}"><rect x="{BOX_LEFT}" y="{top}" width="{}" height="{height}" rx="6" fill="#ffffff" stroke="#8a94a3" stroke-width="1.5"/>"##,
            mark.class(),
            i + 1,
            BOX_RIGHT - BOX_LEFT
        );
        if let Some(id) = mark.message_id() {
            let _ = write!(
                out,
                r##"<text class="flow-place" x="{}" y="{}" font-size="{SMALL}" font-weight="600" text-anchor="end" fill="#1d2430">{}</text>"##,
                BOX_RIGHT - PAD,
                top + PAD + SMALL,
                esc(&tr(self.lang, id, &[]))
            );
        }
        let mut y = top + PAD;
        for line in lines {
            y += line.size;
            let weight = if line.class == "flow-title" {
                r#" font-weight="700""#
            } else {
                ""
            };
            let _ = write!(
                out,
                r##"<text class="{}" x="{}" y="{y}" font-size="{}"{weight} fill="#1d2430">{}</text>"##,
                line.class,
                BOX_LEFT + PAD,
                line.size,
                esc(&line.text)
            );
            y += 5;
        }
        out.push_str("</g>");
    }

    /// The extra edges, curved in the right margin, each a little further out than the last
    /// so that two do not lie on one another.
    fn draw_edges(&self, out: &mut String, placed: &[Placed], end_y: u32) {
        for (k, e) in self.edges.iter().enumerate() {
            let Some(from) = placed.get(e.from) else {
                continue;
            };
            let to_y = match e.to {
                Target::Step(t) => match placed.get(t) {
                    Some(p) => p.top + 14,
                    None => continue,
                },
                Target::End => end_y,
            };
            let from_y = from.top + from.height / 2;
            let out_x = BOX_RIGHT + 12 + 8 * (k as u32 % 3);
            let to_x = if e.to == Target::End {
                CENTRE + 40
            } else {
                BOX_RIGHT + 2
            };
            let _ = write!(
                out,
                r##"<path class="flow-route" d="M{BOX_RIGHT} {from_y} C{out_x} {from_y} {out_x} {to_y} {to_x} {to_y}" stroke="#2457c5" stroke-width="1.5" fill="none" marker-end="url(#{}-arrow)"/>"##,
                self.id
            );
        }
    }

    /// A step in words, with its title in full.
    fn words(&self, i: usize, step: &Step, mark: Mark) -> String {
        let lang = self.lang;
        let mut out = tr(
            lang,
            "drawing-step",
            &[
                ("n", &(i + 1).to_string()),
                ("count", &self.definition.steps.len().to_string()),
                ("kind", &tr(lang, step.interaction.message_id(), &[])),
                ("title", step.title_in(lang)),
            ],
        );
        let marks: Vec<String> = self
            .marks(step)
            .into_iter()
            .map(|(_, m)| m)
            .chain(self.edge_marks(i))
            .collect();
        let _ = write!(out, " {}.", capitalised(&marks.join("; ")));
        if let Some(id) = mark.message_id() {
            let _ = write!(out, " {}.", tr(lang, id, &[]));
        }
        out
    }
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// A deadline in words, in its largest whole unit.
fn duration(lang: Lang, secs: u64) -> String {
    let (id, n) = match secs {
        s if s % 86_400 == 0 => ("drawing-days", s / 86_400),
        s if s % 3600 == 0 => ("drawing-hours", s / 3600),
        s if s % 60 == 0 => ("drawing-minutes", s / 60),
        s => ("drawing-seconds", s),
    };
    tr(lang, id, &[("count", &n.to_string())])
}

/// A character's width in ems, roughly, in a sans-serif face: the drawing has no font metrics,
/// so it errs wide.
fn char_width(c: char) -> f32 {
    match c {
        'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' | 'I' => 0.3,
        'f' | 't' | 'r' | '(' | ')' | '-' => 0.4,
        'm' | 'w' => 0.85,
        'M' | 'W' => 0.95,
        c if c.is_ascii_uppercase() => 0.72,
        c if c.is_ascii() => 0.58,
        // Wide scripts and symbols.
        c if c as u32 >= 0x1100 => 1.0,
        _ => 0.62,
    }
}

fn text_width(text: &str, size: u32, bold: bool) -> f32 {
    let ems: f32 = text.chars().map(char_width).sum();
    ems * size as f32 * if bold { 1.12 } else { 1.0 }
}

/// `text` in at most `most` lines of `room` units, broken at spaces (inside a word too long for
/// a line), the last line cut short with an ellipsis when the rest does not fit.
fn fit(text: &str, room: f32, size: u32, bold: bool, most: usize) -> Vec<String> {
    let fits = |s: &str| text_width(s, size, bold) <= room;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut cut = false;
    'words: for word in text.split_whitespace() {
        let joined = if line.is_empty() {
            word.to_owned()
        } else {
            format!("{line} {word}")
        };
        if fits(&joined) {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for c in word.chars() {
            line.push(c);
            if !fits(&line) {
                line.pop();
                lines.push(std::mem::replace(&mut line, c.to_string()));
            }
            if lines.len() >= most {
                cut = true;
                break 'words;
            }
        }
    }
    if lines.len() >= most && !line.is_empty() {
        cut = true;
    }
    if !line.is_empty() && lines.len() < most {
        lines.push(line);
    }
    lines.truncate(most);
    if cut && let Some(last) = lines.last_mut() {
        while !last.is_empty() && !fits(&format!("{last}…")) {
            last.pop();
        }
        let trimmed = last.trim_end().to_owned();
        *last = format!("{trimmed}…");
    }
    if lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

/// Text for SVG's text and attributes: every character markup gives a meaning escaped.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow<'a>(d: &'a Definition, lang: Lang, standing: Option<&'a Standing>) -> String {
        Flow {
            definition: d,
            lang,
            name: "Buy <things> & more",
            id: "flow",
            standing,
            edges: &[],
        }
        .svg()
    }

    fn spend() -> Definition {
        Definition::parse(
            "form@buyer: Request | Amount* (number), Purpose\n\
             \x20 fr: Demande | Montant, Objet\n\
             review[legal,finance,ops]: Approve | 2 of 3 | only if Amount > 1000 | expires 7d then next\n\
             \x20 fr: Approuver\n\
             payment@buyer: Pay | 5.00 EUR | expires 2h\n",
        )
        .unwrap()
    }

    /// Each step's class, in order.
    fn places(svg: &str) -> Vec<&str> {
        svg.split(r#"<g class="flow-step "#)
            .skip(1)
            .map(|g| &g[..g.find('"').unwrap()])
            .collect()
    }

    /// The text of the SVG's `<desc>`.
    fn desc(svg: &str) -> &str {
        let start = svg.find("<desc id=\"flow-desc\">").unwrap() + 21;
        &svg[start..start + svg[start..].find("</desc>").unwrap()]
    }

    #[test]
    fn a_title_is_escaped_in_the_boxes_and_the_words() {
        let d = Definition::parse("form: <script>alert(1)</script> & co | Name\n").unwrap();
        let svg = flow(&d, Lang::En, None);
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(!svg.contains("& co"), "{svg}");
        assert!(!svg.contains("<things>"), "{svg}");
        assert!(
            svg.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"),
            "{svg}"
        );
        assert!(desc(&svg).contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co"));
        assert!(svg.contains("Buy &lt;things&gt; &amp; more"), "{svg}");
    }

    #[test]
    fn the_drawing_is_an_image_named_and_described_in_the_readers_language() {
        let d = spend();
        let en = flow(&d, Lang::En, None);
        assert!(en.starts_with("<svg "), "{en}");
        assert!(en.contains(r#"role="img""#));
        assert!(en.contains(r#"aria-labelledby="flow-title""#));
        assert!(en.contains(r#"aria-describedby="flow-desc""#));
        assert!(en.contains(r#"viewBox="0 0 360 "#));
        assert!(en.contains("<title id=\"flow-title\">Flow of Buy"), "{en}");
        assert_eq!(en.matches("class=\"flow-step ").count(), 3);
        let words = desc(&en);
        assert!(
            words.starts_with("Step 1 of 3 (Form): Request. By buyer."),
            "{words}"
        );
        assert!(words.contains("Step 2 of 3 (Review): Approve."), "{words}");
        assert!(words.ends_with("Then the end."), "{words}");

        let fr = flow(&d, Lang::Fr, None);
        let words = desc(&fr);
        assert!(
            words.starts_with("Étape 1 sur 3 (Formulaire) : Demande."),
            "{words}"
        );
        assert!(words.contains("Approuver"), "{words}");
        assert!(!words.contains("Approve"), "{words}");
        assert!(fr.contains(">1 · Formulaire<"), "{fr}");
    }

    #[test]
    fn a_condition_k_of_n_and_a_deadline_are_marked_and_a_condition_drawn_around() {
        let d = spend();
        let en = flow(&d, Lang::En, None);
        assert!(en.contains(">only if Amount &gt; 1000<"), "{en}");
        assert!(en.contains(">2 of 3 needed<"), "{en}");
        assert!(en.contains(">deadline 7 days, then the next step<"), "{en}");
        assert!(
            en.contains(">deadline 2 hours, then the instance ends<"),
            "{en}"
        );
        assert_eq!(en.matches("class=\"flow-bypass\"").count(), 1, "{en}");
        assert_eq!(en.matches("class=\"flow-arrow\"").count(), 3, "{en}");
        let fr = flow(&d, Lang::Fr, None);
        assert!(fr.contains(">seulement si Amount &gt; 1000<"), "{fr}");
        assert!(fr.contains(">2 sur 3 nécessaires<"), "{fr}");
        assert!(
            fr.contains(">délai 7 jours, puis l&#39;étape suivante<"),
            "{fr}"
        );
        // A step without a condition is not drawn around.
        let plain = Definition::parse("form: A | X\nreview: B\n").unwrap();
        assert!(!flow(&plain, Lang::En, None).contains("flow-bypass"));
    }

    #[test]
    fn an_instance_shows_its_current_step_the_steps_before_and_its_end() {
        let d = spend();
        let at = |step, state, skipped: Vec<usize>| Standing {
            step,
            state,
            skipped,
        };
        let running = at(2, InstanceState::Active, vec![1]);
        let svg = flow(&d, Lang::En, Some(&running));
        assert_eq!(places(&svg), ["done", "skipped", "current"], "{svg}");
        assert!(svg.contains(">Current step<"), "{svg}");
        assert!(
            desc(&svg)
                .contains("Pay. By buyer; deadline 2 hours, then the instance ends. Current step.")
        );
        assert!(svg.contains("<title id=\"flow-title\">Where this instance stands in Buy"));
        assert!(!svg.contains("flow-end reached"));

        let rejected = at(1, InstanceState::Rejected, vec![]);
        let svg = flow(&d, Lang::Fr, Some(&rejected));
        assert_eq!(places(&svg), ["done", "ended", "ahead"], "{svg}");
        assert!(svg.contains(">Refusée ici<"), "{svg}");
        assert!(
            svg.contains(r#"<g class="flow-end reached rejected">"#),
            "{svg}"
        );
        assert!(svg.contains(">Fin : Refusée<"), "{svg}");

        let complete = at(3, InstanceState::Complete, vec![]);
        let svg = flow(&d, Lang::En, Some(&complete));
        assert_eq!(places(&svg), ["done"; 3], "{svg}");
        assert!(svg.contains(">End: Complete<"), "{svg}");
        // A workflow's drawing marks no step.
        let svg = flow(&d, Lang::En, None);
        assert_eq!(places(&svg), ["ahead"; 3], "{svg}");
        assert!(!svg.contains("flow-place"), "{svg}");
    }

    #[test]
    fn a_long_title_is_cut_in_its_box_and_whole_in_the_words() {
        let long = "Check every one of the supplier's documents, certificates and references before anything else happens";
        let d = Definition::parse(&format!("review: {long}\n")).unwrap();
        let svg = flow(&d, Lang::En, None);
        let titles: Vec<&str> = svg
            .split("class=\"flow-title\"")
            .skip(1)
            .map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()])
            .collect();
        assert_eq!(titles.len(), 2, "{svg}");
        assert!(titles[1].ends_with('…'), "{titles:?}");
        let room = (BOX_RIGHT - BOX_LEFT - 2 * PAD) as f32;
        for t in &titles {
            assert!(
                text_width(&t.replace("&#39;", "'"), BIG, true) <= room,
                "{t}"
            );
        }
        assert!(desc(&svg).contains(&esc(long)));
        // One word wider than a line is broken inside.
        let lines = fit(&"x".repeat(100), 100.0, SMALL, false, 2);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with('…'));
    }

    #[test]
    fn edges_are_curved_on_the_side_and_named_in_their_box() {
        let d = spend();
        let edges = [
            Edge {
                from: 1,
                to: Target::Step(0),
                label: "on reject".into(),
            },
            Edge {
                from: 0,
                to: Target::End,
                label: "if Purpose = <none>".into(),
            },
        ];
        let svg = Flow {
            definition: &d,
            lang: Lang::En,
            name: "x",
            id: "flow",
            standing: None,
            edges: &edges,
        }
        .svg();
        assert_eq!(svg.matches("class=\"flow-route\" d=").count(), 2, "{svg}");
        assert!(svg.contains(">on reject → step 1<"), "{svg}");
        assert!(svg.contains(">if Purpose = &lt;none&gt; → end<"), "{svg}");
        assert!(desc(&svg).contains("on reject → step 1"));
    }

    #[test]
    fn a_definitions_routes_are_its_edges_in_the_readers_language() {
        let definition = Definition::parse(
            "form@employee: Claim | Amount* (number) | if Amount > 5000 go 3\n\
             review@manager: Check | on reject back to 1 | on approve go end\n\
             review@board: Board | expires 3d then to manager\n",
        )
        .unwrap();
        let edges = route_edges(&definition, Lang::En);
        let seen: Vec<(usize, Target, &str)> = edges
            .iter()
            .map(|e| (e.from, e.to, e.label.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                (0, Target::Step(2), "if Amount > 5000"),
                (1, Target::End, "approved"),
                (1, Target::Step(0), "rejected"),
            ]
        );
        assert_eq!(route_edges(&definition, Lang::Fr)[2].label, "refusée");
    }
}
