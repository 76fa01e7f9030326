// ageChart draws memories by age bucket, stacked by type, as inline SVG.

import { h, s } from './dom.js';

const buckets = [
  { label: '≤ 1 day', max: 1 },
  { label: '2–7 days', max: 7 },
  { label: '8–30 days', max: 30 },
  { label: '31–90 days', max: 90 },
  { label: '91–365 days', max: 365 },
  { label: 'older', max: Infinity },
];
const types = ['user', 'feedback', 'project', 'reference', 'none'];

// niceStep returns the step of a count axis up to max: the smallest of 1,
// 2 and 5 times a power of ten that needs at most intervals steps.
export function niceStep(max, intervals) {
  for (let p = 1; ; p *= 10) {
    for (const m of [1, 2, 5]) {
      if (Math.ceil(max / (m * p)) <= intervals) return m * p;
    }
  }
}

// ageChart returns the chart, width pixels wide (the width of its card: it
// is drawn at that size, so its text keeps its size), and its legend.
export function ageChart(memories, width) {
  const counts = buckets.map(() => Object.fromEntries(types.map(t => [t, 0])));
  for (const m of memories) {
    const i = buckets.findIndex(b => m.age_days <= b.max);
    counts[i][m.type || 'none']++;
  }
  const totals = counts.map(c => types.reduce((n, t) => n + c[t], 0));
  const tallest = Math.max(1, ...totals);
  const step = niceStep(tallest, 6);
  const top = step * Math.ceil(tallest / step);
  const W = Math.max(360, Math.floor(width)), H = 320, left = 48, right = 12, above = 24, bottom = 40;
  const plotH = H - above - bottom, barW = (W - left - right) / buckets.length;
  const svg = s('svg', { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'memories by age and type' });
  for (let v = 0; v <= top; v += step) {
    const y = H - bottom - plotH * v / top;
    svg.appendChild(s('line', { class: 'axis', x1: left, y1: y, x2: W - right, y2: y, 'stroke-dasharray': v ? '2 4' : null }));
    svg.appendChild(s('text', { x: left - 8, y: y + 4, 'text-anchor': 'end' }, String(v)));
  }
  buckets.forEach((b, i) => {
    let y = H - bottom;
    const bar = Math.min(barW * 0.7, 160);
    const x = left + i * barW + (barW - bar) / 2;
    for (const t of types) {
      const n = counts[i][t];
      if (!n) continue;
      const hgt = plotH * n / top;
      y -= hgt;
      const r = s('rect', { x, y, width: bar, height: hgt, class: 'bar t-' + t, 'data-type': t });
      r.appendChild(s('title', {}, `${b.label}: ${n} ${t === 'none' ? 'untyped' : t}`));
      svg.appendChild(r);
    }
    svg.appendChild(s('text', { x: x + bar / 2, y: H - bottom + 18, 'text-anchor': 'middle' }, b.label));
    if (totals[i]) svg.appendChild(s('text', { x: x + bar / 2, y: y - 6, 'text-anchor': 'middle' }, String(totals[i])));
  });
  const legend = h('div', { class: 'legend' }, types.map(t => h('span', {}, h('i', { class: 'swatch-' + t }), t === 'none' ? 'untyped' : t)));
  return [svg, legend];
}
