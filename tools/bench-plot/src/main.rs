//! `bench-plot IN.json [OUT.svg] [--note TEXT]`: draws the scoreboard that `make bench` writes
//! (`BENCH_JSON`, hip-conformance/bench/scoreboard.c: one object per row with `operation`,
//! `ours`, `unit`, `reference`, `reference_value` and, beside stock HIP, `stock_hip`) as one SVG:
//! on top, `hipMemcpyPeer` bandwidth (GB/s) against copy size for ours (peer access and staged),
//! stock HIP 5.2 and host `memcpy`; below, every latency row (unit `us`) as a pair of bars, ours
//! and stock HIP, on a log scale. OUT defaults to IN with `.svg` for `.json`. The note (default:
//! the machine's CPU count) goes under the title, so a picture says where it was measured.

use plotters::coord::ranged1d::SegmentValue;
use plotters::prelude::*;
use std::error::Error;

/// One scoreboard row.
struct Row {
    op: String,
    ours: f64,
    unit: String,
    reference: String,
    reference_value: f64,
    stock: Option<f64>,
}

fn rows(json: &str) -> Result<Vec<Row>, Box<dyn Error>> {
    let v: serde_json::Value = serde_json::from_str(json)?;
    let arr = v.as_array().ok_or("the scoreboard JSON is not an array")?;
    let mut out = Vec::new();
    for r in arr {
        let s = |k: &str| r.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        let f = |k: &str| r.get(k).and_then(|x| x.as_f64());
        out.push(Row {
            op: s("operation").trim().to_string(),
            ours: f("ours").unwrap_or(f64::NAN),
            unit: s("unit"),
            reference: s("reference"),
            reference_value: f("reference_value").unwrap_or(f64::NAN),
            stock: f("stock_hip"),
        });
    }
    Ok(out)
}

/// The size in MiB of a row named `<prefix><N> MiB`.
fn size_mib(op: &str, prefix: &str) -> Option<f64> {
    op.strip_prefix(prefix)?.strip_suffix(" MiB")?.trim().parse().ok()
}

/// A named series of (size MiB, GB/s) points.
type Series = (String, Vec<(f64, f64)>, RGBColor);

/// The peer bandwidth series: ours and stock HIP with peer access and staged, host memcpy.
fn bandwidth_series(rows: &[Row]) -> Vec<Series> {
    const PEER: &str = "hipMemcpyPeer with peer access, ";
    const STAGED: &str = "hipMemcpyPeer staged (no peer), ";
    let pick = |prefix: &str, f: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
        let mut v: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.unit == "GB/s")
            .filter_map(|r| Some((size_mib(&r.op, prefix)?, f(r)?)))
            .filter(|(_, y)| y.is_finite())
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    let ours = |r: &Row| Some(r.ours);
    let stock = |r: &Row| r.stock;
    let host = |r: &Row| (r.reference.starts_with("host memcpy")).then_some(r.reference_value);
    let mut host_pts = pick(PEER, &host);
    for p in pick(STAGED, &host) {
        if !host_pts.iter().any(|q| q.0 == p.0) {
            host_pts.push(p);
        }
    }
    host_pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let all = vec![
        ("hipkfd, peer access".to_string(), pick(PEER, &ours), RGBColor(0xd6, 0x27, 0x28)),
        ("hipkfd, staged (no peer access)".to_string(), pick(STAGED, &ours), RGBColor(0xff, 0x7f, 0x0e)),
        ("stock HIP 5.2, peer access".to_string(), pick(PEER, &stock), RGBColor(0x1f, 0x77, 0xb4)),
        ("stock HIP 5.2, staged".to_string(), pick(STAGED, &stock), RGBColor(0x17, 0xbe, 0xcf)),
        ("host memcpy (same run)".to_string(), host_pts, RGBColor(0x55, 0x55, 0x55)),
    ];
    all.into_iter().filter(|s| !s.1.is_empty()).collect()
}

fn draw_bandwidth(area: &DrawingArea<SVGBackend, plotters::coord::Shift>, rows: &[Row]) -> Result<(), Box<dyn Error>> {
    let series = bandwidth_series(rows);
    if series.is_empty() {
        area.draw(&Text::new("(no hipMemcpyPeer bandwidth rows in this JSON)", (60, 60), ("sans-serif", 16)))?;
        return Ok(());
    }
    let pts = series.iter().flat_map(|s| s.1.iter());
    let (xmin, xmax) = pts.clone().fold((f64::MAX, 0f64), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let ymax = pts.fold(0f64, |a, p| a.max(p.1)) * 1.15;
    let mut chart = ChartBuilder::on(area)
        .caption("hipMemcpyPeer bandwidth, GPU 0 -> GPU 1", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((xmin / 1.5..xmax * 1.5).log_scale(), 0f64..ymax.max(1.0))?;
    chart.configure_mesh().x_desc("copy size (MiB)").y_desc("GB/s").x_label_formatter(&|x| format!("{x:.0}")).draw()?;
    for (name, pts, color) in series {
        let c = color;
        chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// The latency rows (unit `us`): (name, ours, stock).
fn latency_rows(rows: &[Row]) -> Vec<(String, f64, Option<f64>)> {
    rows.iter()
        .filter(|r| r.unit == "us" && r.ours.is_finite() && r.ours > 0.0)
        .map(|r| (r.op.clone(), r.ours, r.stock.filter(|s| s.is_finite() && *s > 0.0)))
        .collect()
}

fn draw_latency(area: &DrawingArea<SVGBackend, plotters::coord::Shift>, rows: &[Row]) -> Result<(), Box<dyn Error>> {
    let lat = latency_rows(rows);
    if lat.is_empty() {
        area.draw(&Text::new("(no latency rows in this JSON)", (60, 60), ("sans-serif", 16)))?;
        return Ok(());
    }
    let n = lat.len() as i32;
    let vals = lat.iter().flat_map(|(_, o, s)| std::iter::once(*o).chain(*s));
    let (lo, hi) = vals.fold((f64::MAX, 0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (xlo, xhi) = (lo / 2.0, hi * 2.0);
    let names: Vec<String> = lat.iter().map(|(n, _, _)| n.clone()).collect();
    let mut chart = ChartBuilder::on(area)
        .caption("Latency rows (log scale; red hipkfd, blue stock HIP 5.2)", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(420)
        // Segments 0..=n-1, one a row, the first row on top.
        .build_cartesian_2d((xlo..xhi).log_scale(), (0..n - 1).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("microseconds")
        .y_labels(lat.len())
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => names.get((n - 1 - *i) as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .label_style(("sans-serif", 12))
        .draw()?;
    let ours_c = RGBColor(0xd6, 0x27, 0x28);
    let stock_c = RGBColor(0x1f, 0x77, 0xb4);
    for (k, (_, ours, stock)) in lat.iter().enumerate() {
        let i = n - 1 - k as i32;
        chart.draw_series(std::iter::once(Rectangle::new(
            [(xlo, SegmentValue::CenterOf(i)), (*ours, SegmentValue::Exact(i + 1))],
            ours_c.filled(),
        )))?;
        if let Some(s) = stock {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(xlo, SegmentValue::Exact(i)), (*s, SegmentValue::CenterOf(i))],
                stock_c.filled(),
            )))?;
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let mut input = None;
    let mut output = None;
    let mut note = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--note" => note = args.next(),
            _ if input.is_none() => input = Some(a),
            _ => output = Some(a),
        }
    }
    let Some(input) = input else {
        eprintln!("usage: bench-plot IN.json [OUT.svg] [--note TEXT]");
        std::process::exit(2);
    };
    let output = output.unwrap_or_else(|| match input.strip_suffix(".json") {
        Some(stem) => format!("{stem}.svg"),
        None => format!("{input}.svg"),
    });
    let rows = rows(&std::fs::read_to_string(&input).map_err(|e| format!("{input}: {e}"))?)?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let note = note.unwrap_or_else(|| {
        format!("make bench on kfd-sim, a {cpus}-CPU machine: a simulator's figures, not hardware's")
    });
    let lat_rows = latency_rows(&rows).len() as u32;
    let (w, h_top, h_bottom) = (1100u32, 460u32, 80 + 26 * lat_rows.max(4));
    let root = SVGBackend::new(&output, (w, 60 + h_top + h_bottom)).into_drawing_area();
    root.fill(&WHITE)?;
    let (title, rest) = root.split_vertically(60);
    title.draw(&Text::new("hipkfd scoreboard", (12, 8), ("sans-serif", 24)))?;
    title.draw(&Text::new(note, (12, 36), ("sans-serif", 14)))?;
    let (top, bottom) = rest.split_vertically(h_top);
    draw_bandwidth(&top, &rows)?;
    draw_latency(&bottom, &rows)?;
    root.present()?;
    eprintln!("bench-plot: wrote {output}");
    Ok(())
}
