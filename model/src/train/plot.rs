//! `loss.png`: training and validation loss by step, drawn from the run's CSV logs.

use anyhow::{Context, Result};
use plotters::prelude::*;
use std::path::Path;

/// Fonts tried for the labels (Debian's fonts-dejavu-core ships the first).
const FONTS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

fn read_series(path: &Path, column: &str) -> Result<Vec<(f64, f64)>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(Vec::new());
    };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let at = header
        .iter()
        .position(|h| *h == column)
        .context("no such column")?;
    Ok(lines
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            Some((fields.first()?.parse().ok()?, fields.get(at)?.parse().ok()?))
        })
        .collect())
}

fn register_font() -> Result<()> {
    static ONCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *ONCE.get_or_init(|| {
        FONTS
            .iter()
            .find_map(|path| std::fs::read(path).ok())
            .is_some_and(|bytes| {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
            })
    });
    ok.then_some(())
        .context("no DejaVuSans.ttf for the labels (apt-get install fonts-dejavu-core)")
}

/// Draw `out/loss.png` from `out/train.csv` and `out/valid.csv`.
pub fn loss_curve(out: &Path) -> Result<()> {
    register_font()?;
    let train = read_series(&out.join("train.csv"), "loss")?;
    let valid = read_series(&out.join("valid.csv"), "loss")?;
    let all = train.iter().chain(&valid);
    let max_step = all.clone().map(|p| p.0).fold(1.0, f64::max);
    let max_loss = all.map(|p| p.1).fold(0.1, f64::max);
    let png = out.join("loss.png");
    let root = BitMapBackend::new(&png, (900, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Neural debugger: cross-entropy on predicted states",
            ("sans-serif", 22),
        )
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..max_step, 0.0..max_loss * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("step")
        .y_desc("loss (nats per token)")
        .draw()?;
    chart
        .draw_series(LineSeries::new(train, &BLUE))?
        .label("train")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart
        .draw_series(LineSeries::new(valid.clone(), RED.stroke_width(2)))?
        .label("validation")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    chart.draw_series(valid.into_iter().map(|p| Circle::new(p, 3, RED.filled())))?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
