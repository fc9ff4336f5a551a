//! The sizing charts as the settings pages and the status report draw them: each guarded
//! address's history (`crate::limits::sizing`) against the limits configured now, laid out here in the
//! SVG's own units so the template (`admin/sizing.html`) only places what it is given.

use crate::domain::settings::Settings;
use crate::http::AppState;
use crate::http::context::PageContext;
use crate::i18n::Message;
use crate::limits::guard::{Address, FloodGuard, Limits};
use crate::limits::sizing::{Figures, History, PERIODS};

/// The SVG's coordinate system: the chart scales to its box, so these are proportions. Text is
/// 14 units high, about 12 px at a phone's 390 px.
const WIDTH: f32 = 400.0;
const HEIGHT: f32 = 200.0;
const LEFT: f32 = 48.0;
const RIGHT: f32 = 392.0;
const TOP: f32 = 12.0;
const BOTTOM: f32 = 170.0;
/// Every `LABEL_EVERY`th period from the current one is named under the axis.
const LABEL_EVERY: usize = 10;

/// What a page shows for one address's history: a chart, or, while nothing came yet, words.
/// An address that does not count has none (`views` leaves it out).
pub struct SizingView {
    /// [`Address::chart`]: the element ids are `sizing-{key}-…`.
    pub key: &'static str,
    pub title: String,
    /// It counts, but nothing came yet: said in words.
    pub empty: Option<String>,
    pub chart: Option<Box<Chart>>,
}

pub struct Chart {
    pub intro: String,
    pub panels: [Panel; 2],
    /// The table's heading for the busiest caller, which names what a caller is here.
    pub busiest_column: String,
    /// The table, newest period first.
    pub rows: Vec<Row>,
    /// Said under the table when a period told apart fewer callers than came.
    pub approximate: Option<String>,
}

pub struct Panel {
    /// `total` or `per-caller`: the element ids are `sizing-{key}-{id}…`.
    pub id: &'static str,
    pub heading: String,
    pub desc: String,
    pub view_box: String,
    pub ticks: Vec<Tick>,
    pub bars: Vec<Bar>,
    /// A short stroke across a bar (the 99th percentile).
    pub marks: Vec<Mark>,
    pub limit: Option<Level>,
    pub x_labels: Vec<XLabel>,
    pub legend: Vec<(&'static str, String)>,
    /// The axis lines' ends, and where the value labels end.
    pub tick_x: f32,
    pub left: f32,
    pub right: f32,
    pub top: f32,
    pub bottom: f32,
}

pub struct Tick {
    pub y: f32,
    pub text_y: f32,
    pub label: String,
}

pub struct Bar {
    pub class: &'static str,
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
    pub tip: String,
}

pub struct Mark {
    pub x1: f32,
    pub x2: f32,
    pub y: f32,
}

pub struct Level {
    pub y: f32,
    pub label: String,
    pub label_y: f32,
}

pub struct XLabel {
    pub x: f32,
    /// `middle`, or `end` for the last, so it stays inside the chart.
    pub anchor: &'static str,
    pub label: String,
}

pub struct Row {
    pub current: bool,
    pub start: String,
    pub requests: u64,
    pub busiest: String,
    pub busiest_count: u64,
    pub p99: u64,
    pub refused: u64,
    pub would_refuse: u64,
    pub approximate: bool,
}

/// The charts of the addresses in `charted` that count under `settings`, in that order: each
/// history as this server kept it, against the limits the settings name now.
pub fn views(
    state: &AppState,
    settings: &Settings,
    charted: &[Address],
    ctx: &PageContext,
) -> Vec<SizingView> {
    charted
        .iter()
        .filter_map(|&charted| {
            let limits = settings.limits_of(charted);
            FloodGuard::is_counting(&limits).then(|| {
                let history = state.guard.sizing(charted, limits.period);
                build(charted, &history, &limits, ctx)
            })
        })
        .collect()
}

fn round(v: f32) -> f32 {
    (v * 10.0).round() / 10.0
}

/// A scale's top and step: 1, 2 or 5 times a power of ten, at most four steps to the top.
fn scale(max: u64) -> (u64, u64) {
    let max = max.max(1);
    let mut unit = 1u64;
    loop {
        for m in [1, 2, 5] {
            let step = unit.saturating_mul(m);
            if step.saturating_mul(4) >= max {
                return (step.saturating_mul(max.div_ceil(step)), step);
            }
        }
        unit = unit.saturating_mul(10);
    }
}

/// Short numbers for the axis: 950, 12k, 1.5M.
fn short(n: u64) -> String {
    match n {
        0..10_000 => n.to_string(),
        10_000..1_000_000 => format!("{}k", n / 1000),
        _ if n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A period's start as the axis and the table name it, in UTC: the table gives the date and
/// time, the axis the time of day for periods under a day (with seconds under a minute), the
/// date otherwise.
fn start_label(start_ms: i64, period_secs: u64, full: bool) -> String {
    let secs = start_ms.div_euclid(1000);
    // "2026-11-29 16:43 UTC"
    let text = crate::time::format_utc(secs);
    let seconds = if period_secs < 60 {
        format!(":{:02}", secs.rem_euclid(60))
    } else {
        String::new()
    };
    if full {
        format!("{}{seconds}", &text[..16])
    } else if period_secs >= 86_400 {
        text[5..10].to_owned()
    } else {
        format!("{}{seconds}", &text[11..16])
    }
}

struct Frame {
    top_value: u64,
    slot: f32,
    offset: usize,
}

impl Frame {
    fn y(&self, value: u64) -> f32 {
        round(BOTTOM - (BOTTOM - TOP) * value as f32 / self.top_value as f32)
    }

    fn x(&self, index: usize) -> f32 {
        round(LEFT + self.slot * (self.offset + index) as f32)
    }
}

fn panel(
    id: &'static str,
    heading: String,
    desc: String,
    history: &History,
    values: &dyn Fn(&Figures) -> u64,
    limit: u64,
    ctx: &PageContext,
) -> (Panel, Frame) {
    let periods = &history.periods;
    let max = periods.iter().map(values).max().unwrap_or(0).max(limit);
    let (top_value, step) = scale(max);
    let frame = Frame {
        top_value,
        slot: (RIGHT - LEFT) / PERIODS as f32,
        // The current period sits at the right edge, whatever the history's length.
        offset: PERIODS.saturating_sub(periods.len()),
    };
    let ticks = (0..=top_value / step)
        .map(|i| {
            let y = frame.y(i * step);
            Tick {
                y,
                text_y: round(y + 5.0),
                label: short(i * step),
            }
        })
        .collect();
    // Every place on the axis is named, a period kept or not: counted back from the current.
    let period_secs = history.period.as_secs();
    let period_ms = (history.period.as_millis() as i64).max(1);
    let now_start = periods.last().map_or(0, |p| p.start_ms);
    let x_labels = (0..PERIODS)
        .filter(|slot| (PERIODS - 1 - slot) % LABEL_EVERY == 0)
        .map(|slot| {
            let back = (PERIODS - 1 - slot) as i64;
            let x = LEFT + frame.slot * slot as f32;
            if back == 0 {
                XLabel {
                    x: RIGHT,
                    anchor: "end",
                    label: ctx.t("sizing-now"),
                }
            } else {
                XLabel {
                    x: round(x + frame.slot / 2.0),
                    anchor: "middle",
                    label: start_label(now_start - back * period_ms, period_secs, false),
                }
            }
        })
        .collect();
    let limit = (limit > 0).then(|| {
        let y = frame.y(limit);
        Level {
            y,
            label: short(limit),
            // Above the line, unless that would leave the chart.
            label_y: if y - 4.0 < TOP + 10.0 {
                round(y + 14.0)
            } else {
                round(y - 4.0)
            },
        }
    });
    (
        Panel {
            id,
            heading,
            desc,
            view_box: format!("0 0 {WIDTH} {HEIGHT}"),
            ticks,
            bars: Vec::new(),
            marks: Vec::new(),
            limit,
            x_labels,
            legend: Vec::new(),
            tick_x: LEFT - 6.0,
            left: LEFT,
            right: RIGHT,
            top: TOP,
            bottom: BOTTOM,
        },
        frame,
    )
}

fn bar(frame: &Frame, index: usize, class: &'static str, from: u64, to: u64, tip: &str) -> Bar {
    let gap = (frame.slot * 0.15).max(1.0);
    let (y_to, y_from) = (frame.y(to), frame.y(from));
    Bar {
        class,
        x: round(frame.x(index) + gap / 2.0),
        y: y_to,
        width: round(frame.slot - gap),
        height: round((y_from - y_to).max(0.0)),
        tip: tip.to_owned(),
    }
}

/// Lays one address's history out.
fn build(charted: Address, history: &History, limits: &Limits, ctx: &PageContext) -> SizingView {
    let key = charted.chart();
    // Every message names the address, whose words some of them choose by it.
    let msg = |id: &'static str| Message::new(id).arg("address", key);
    let period = history.period.as_secs().to_string();
    let title = ctx.msg(&msg("sizing-title"));
    if history.is_empty() {
        return SizingView {
            key,
            title,
            empty: Some(
                ctx.msg(
                    &msg("sizing-empty")
                        .arg("periods", PERIODS.to_string())
                        .arg("period", period),
                ),
            ),
            chart: None,
        };
    }
    let periods = &history.periods;
    let period_secs = history.period.as_secs();
    let most = |f: &dyn Fn(&Figures) -> u64| periods.iter().map(f).max().unwrap_or(0);
    let limit_text = |limit: u64| {
        if limit == 0 {
            ctx.t("sizing-limit-off")
        } else {
            limit.to_string()
        }
    };

    let total_desc = ctx.msg(
        &msg("sizing-total-desc")
            .arg("periods", periods.len().to_string())
            .arg("period", period.clone())
            .arg("most", most(&|p| p.requests).to_string())
            .arg(
                "refusals",
                periods
                    .iter()
                    .map(Figures::refusals)
                    .sum::<u64>()
                    .to_string(),
            )
            .arg("limit", limit_text(limits.total)),
    );
    let (mut total, frame) = panel(
        "total",
        ctx.msg(&msg("sizing-total-heading")),
        total_desc,
        history,
        &|p| p.requests,
        limits.total,
        ctx,
    );
    for (i, p) in periods.iter().enumerate() {
        let start = start_label(p.start_ms, period_secs, true);
        let tip = ctx.msg(
            &msg("sizing-total-tip")
                .arg("start", start)
                .arg("requests", p.requests.to_string())
                .arg("refusals", p.refusals().to_string()),
        );
        let answered = p.requests - p.refused;
        let class = if p.current {
            "requests current"
        } else {
            "requests"
        };
        // Answered below, refusals (real or would-be) on top: would-be ones were answered.
        let below = answered.saturating_sub(p.would_refuse);
        if p.requests > 0 {
            total.bars.push(bar(&frame, i, class, 0, below, &tip));
        }
        if p.refusals() > 0 {
            total
                .bars
                .push(bar(&frame, i, "refusals", below, p.requests, &tip));
        }
    }
    total.legend = vec![
        ("requests", ctx.t("sizing-legend-requests")),
        ("refusals", ctx.t("sizing-legend-refusals")),
        ("current", ctx.t("sizing-legend-current")),
        (
            "limit",
            ctx.msg(&msg("sizing-legend-total-limit").arg("limit", limit_text(limits.total))),
        ),
    ];

    let busiest = |p: &Figures| p.busiest.as_ref().map_or(0, |b| b.count);
    let per_caller_desc = ctx.msg(
        &msg("sizing-per-caller-desc")
            .arg("periods", periods.len().to_string())
            .arg("busiest", most(&busiest).to_string())
            .arg("p99", most(&|p| p.p99).to_string())
            .arg("limit", limit_text(limits.per_caller)),
    );
    let (mut per_caller, frame) = panel(
        "per-caller",
        ctx.msg(&msg("sizing-per-caller-heading")),
        per_caller_desc,
        history,
        &busiest,
        limits.per_caller,
        ctx,
    );
    for (i, p) in periods.iter().enumerate() {
        let Some(b) = &p.busiest else { continue };
        let tip = ctx.msg(
            &msg("sizing-per-caller-tip")
                .arg("start", start_label(p.start_ms, period_secs, true))
                .arg("caller", b.caller.clone())
                .arg("busiest", b.count.to_string())
                .arg("p99", p.p99.to_string()),
        );
        let class = if p.current {
            "busiest current"
        } else {
            "busiest"
        };
        per_caller
            .bars
            .push(bar(&frame, i, class, 0, b.count, &tip));
        let x = frame.x(i);
        per_caller.marks.push(Mark {
            x1: round(x),
            x2: round(x + frame.slot),
            y: frame.y(p.p99),
        });
    }
    per_caller.legend = vec![
        ("busiest", ctx.msg(&msg("sizing-legend-busiest"))),
        ("p99", ctx.msg(&msg("sizing-legend-p99"))),
        ("current", ctx.t("sizing-legend-current")),
        (
            "limit",
            ctx.msg(
                &msg("sizing-legend-per-caller-limit").arg("limit", limit_text(limits.per_caller)),
            ),
        ),
    ];

    let rows = periods
        .iter()
        .rev()
        .filter(|p| p.requests > 0 || p.current)
        .map(|p| Row {
            current: p.current,
            start: start_label(p.start_ms, period_secs, true),
            requests: p.requests,
            busiest: p
                .busiest
                .as_ref()
                .map(|b| b.caller.clone())
                .unwrap_or_default(),
            busiest_count: busiest(p),
            p99: p.p99,
            refused: p.refused,
            would_refuse: p.would_refuse,
            approximate: p.approximate,
        })
        .collect();
    let approximate = periods.iter().any(|p| p.approximate).then(|| {
        ctx.msg(
            &msg("sizing-approximate")
                .arg("callers", crate::limits::sizing::MAX_CALLERS.to_string()),
        )
    });
    SizingView {
        key,
        title,
        empty: None,
        chart: Some(Box::new(Chart {
            intro: ctx.msg(
                &msg("sizing-intro")
                    .arg("periods", PERIODS.to_string())
                    .arg("period", period),
            ),
            panels: [total, per_caller],
            busiest_column: ctx.msg(&msg("sizing-col-busiest")),
            rows,
            approximate,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_ends_on_a_round_number_at_or_above_the_most() {
        assert_eq!(scale(0), (1, 1));
        assert_eq!(scale(7), (8, 2));
        assert_eq!(scale(158), (200, 50));
        assert_eq!(scale(1000), (1000, 500));
        assert_eq!(short(12_500), "12k");
        assert_eq!(short(3_000_000), "3M");
    }
}
