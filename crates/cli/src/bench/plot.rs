//! The results as an SVG plot: compression ratio (y) against speed (x, MB/s,
//! log scale), one labelled marker per compressor and setting, totals over
//! the set. Two panels side by side: compression speed and decompression
//! speed. sep settings are triangles, peers circles.
//!
//! Drawn with plotters' SVG backend and no font feature: text is written as
//! SVG `<text>` elements that the viewer renders, so nothing here needs a
//! font file or system library.

use super::row::{Row, totals};
use anyhow::{Result, anyhow};
use plotters::prelude::*;
use std::path::Path;

/// Size of the picture in pixels.
const SIZE: (u32, u32) = (1280, 580);

/// One marker: label, speeds (compress, decompress) and ratio.
#[derive(Debug, Clone)]
struct Point {
    label: String,
    sep: bool,
    speed: [f64; 2],
    ratio: f64,
}

/// Writes the plot of `rows` (their totals per compressor) to `path`.
pub fn write(path: &Path, rows: &[Row], title: &str) -> Result<()> {
    let svg = render(rows, title)?;
    std::fs::write(path, svg).map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
}

/// The SVG text of the plot.
pub fn render(rows: &[Row], title: &str) -> Result<String> {
    let points: Vec<Point> = totals(rows)
        .iter()
        .map(|t| Point {
            label: t.label.clone(),
            sep: t.compressor == "sep",
            speed: [t.compress_mbps(), t.decompress_mbps()],
            ratio: t.ratio(),
        })
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root
            .titled(title, ("sans-serif", 18).into_font())
            .map_err(err)?;
        let panels = root.split_evenly((1, 2));
        let names = ["compression", "decompression"];
        for (i, panel) in panels.iter().enumerate() {
            draw_panel(panel, &points, i, names[i])?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    points: &[Point],
    which: usize,
    name: &str,
) -> Result<()> {
    let shown: Vec<&Point> = points
        .iter()
        .filter(|p| p.speed[which].is_finite() && p.speed[which] > 0.0 && p.ratio.is_finite())
        .collect();
    let (xlo, xhi) = range(shown.iter().map(|p| p.speed[which]), 1.0);
    let (xlo, xhi) = (xlo / 2.0, xhi * 2.0);
    let (ylo, yhi) = range(shown.iter().map(|p| p.ratio), 1.0);
    let pad = ((yhi - ylo) * 0.1).max(0.05);
    let (ylo, yhi) = ((ylo - pad).max(0.0), yhi + pad);
    let mut chart = ChartBuilder::on(area)
        .margin(16)
        .caption(
            format!("ratio vs {name} speed (totals)"),
            ("sans-serif", 15).into_font(),
        )
        .x_label_area_size(44)
        .y_label_area_size(56)
        .build_cartesian_2d((xlo..xhi).log_scale(), ylo..yhi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc(format!("{name} speed, MB/s (log scale)"))
        .y_desc("ratio (original / compressed)")
        .label_style(("sans-serif", 12).into_font())
        .draw()
        .map_err(err)?;
    let pixels: Vec<(i32, i32)> = shown
        .iter()
        .map(|p| chart.backend_coord(&(p.speed[which], p.ratio)))
        .collect();
    let offsets = place_labels(
        &pixels,
        &shown.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(),
    );
    for (k, p) in shown.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let style = ShapeStyle::from(color).filled();
        let font = ("sans-serif", LABEL_SIZE).into_font().color(&BLACK);
        let at = (p.speed[which], p.ratio);
        let marker = if p.sep {
            TriangleMarker::new((0, 0), 7, style).into_dyn()
        } else {
            Circle::new((0, 0), 5, style).into_dyn()
        };
        let element =
            EmptyElement::at(at) + marker + Text::new(p.label.clone(), offsets[k], font).into_dyn();
        chart.draw_series(std::iter::once(element)).map_err(err)?;
    }
    Ok(())
}

/// Font size of the labels (plotters writes 1/1.24 of it as the SVG size).
const LABEL_SIZE: f64 = 13.0;

/// Label offsets from their markers (pixels, to the label's top-left corner)
/// that keep labels off each other and off the markers where one of a few
/// places around the marker is free; the first place otherwise.
fn place_labels(pixels: &[(i32, i32)], labels: &[&str]) -> Vec<(i32, i32)> {
    type Rect = (i32, i32, i32, i32);
    let overlaps = |a: &Rect, b: &Rect| a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3;
    // Rendered size: about 0.55 em per character at LABEL_SIZE / 1.24 px.
    let em = LABEL_SIZE / 1.24;
    let mut taken: Vec<Rect> = pixels
        .iter()
        .map(|&(x, y)| (x - 6, y - 6, x + 7, y + 7))
        .collect();
    let mut out = Vec::with_capacity(labels.len());
    for (&(x, y), label) in pixels.iter().zip(labels) {
        let w = (em * 0.55 * label.chars().count() as f64).ceil() as i32;
        let h = em.ceil() as i32 + 2;
        let candidates = [
            (8, -14),
            (8, 3),
            (-8 - w, -14),
            (-8 - w, 3),
            (-w / 2, -22),
            (-w / 2, 9),
            (8, -26),
            (8, 15),
        ];
        let own = (x - 6, y - 6, x + 7, y + 7);
        let pick = candidates
            .iter()
            .copied()
            .find(|&(dx, dy)| {
                let r = (x + dx, y + dy, x + dx + w, y + dy + h);
                taken.iter().all(|t| *t == own || !overlaps(&r, t))
            })
            .unwrap_or(candidates[0]);
        taken.push((x + pick.0, y + pick.1, x + pick.0 + w, y + pick.1 + h));
        out.push(pick);
    }
    out
}

/// Least and greatest of the values; `(d, d)`-based when there are none.
fn range(values: impl Iterator<Item = f64>, default: f64) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if lo.is_finite() {
        (lo, hi)
    } else {
        (default / 2.0, default * 2.0)
    }
}

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("plot: {e}")
}

#[cfg(test)]
mod tests {
    use super::super::row::tests::row;
    use super::*;

    #[test]
    fn draws_one_marker_and_label_per_compressor() {
        let rows = [
            row("a", "sep order2", 1_000_000, Some(400_000)),
            row("a", "xz", 1_000_000, Some(300_000)),
        ];
        let svg = render(&rows, "test <set> & title").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
        assert!(svg.trim_end().ends_with("</svg>"));
        // plotters writes each text on its own line between the tags.
        assert_eq!(
            svg.matches("\nsep order2\n").count(),
            2,
            "a label per panel"
        );
        assert_eq!(svg.matches("\nxz\n").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 4, "a marker per panel");
        assert!(svg.contains("test &lt;set&gt; &amp; title"));
    }

    #[test]
    fn labels_avoid_each_other() {
        // One marker just below another: its label goes below it.
        let o = place_labels(&[(100, 100), (100, 112)], &["first", "second"]);
        assert_eq!(o, vec![(8, -14), (8, 3)]);
        // A label that would cover the next marker goes elsewhere.
        let o = place_labels(&[(100, 100), (130, 100)], &["first", "x"]);
        assert_ne!(o[0], (8, -14));
        // Far apart: both take the first place.
        let o = place_labels(&[(100, 100), (400, 300)], &["a", "b"]);
        assert_eq!(o, vec![(8, -14), (8, -14)]);
    }

    #[test]
    fn empty_results_still_draw() {
        let svg = render(&[row("a", "x", 1000, None)], "t").unwrap();
        assert!(svg.contains("</svg>"));
    }
}
