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

export function ageChart(memories) {
  const counts = buckets.map(() => Object.fromEntries(types.map(t => [t, 0])));
  for (const m of memories) {
    const i = buckets.findIndex(b => m.age_days <= b.max);
    counts[i][m.type || 'none']++;
  }
  const totals = counts.map(c => types.reduce((n, t) => n + c[t], 0));
  const step = Math.max(1, Math.ceil(Math.max(1, ...totals) / 4));
  const top = step * Math.ceil(Math.max(1, ...totals) / step);
  const W = 720, H = 300, left = 40, bottom = 40, barW = (W - left - 20) / buckets.length;
  const plotH = H - bottom - 20;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'memories by age and type' });
  svg.appendChild(s('line', { class: 'axis', x1: left, y1: H - bottom, x2: W - 10, y2: H - bottom }));
  for (let v = 0; v <= top; v += step) {
    const y = H - bottom - plotH * v / top;
    svg.appendChild(s('line', { class: 'axis', x1: left, y1: y, x2: W - 10, y2: y, 'stroke-dasharray': '2 4' }));
    svg.appendChild(s('text', { x: left - 6, y: y + 4, 'text-anchor': 'end' }, String(v)));
  }
  buckets.forEach((b, i) => {
    let y = H - bottom;
    const x = left + i * barW + barW * 0.15;
    for (const t of types) {
      const n = counts[i][t];
      if (!n) continue;
      const hgt = plotH * n / top;
      y -= hgt;
      const r = s('rect', { x, y, width: barW * 0.7, height: hgt, class: 'bar t-' + t, 'data-type': t });
      r.appendChild(s('title', {}, `${b.label}: ${n} ${t === 'none' ? 'untyped' : t}`));
      svg.appendChild(r);
    }
    svg.appendChild(s('text', { x: x + barW * 0.35, y: H - bottom + 18, 'text-anchor': 'middle' }, b.label));
    if (totals[i]) svg.appendChild(s('text', { x: x + barW * 0.35, y: y - 5, 'text-anchor': 'middle' }, String(totals[i])));
  });
  const legend = h('div', { class: 'legend' }, types.map(t => h('span', {}, h('i', { class: 'swatch-' + t }), t === 'none' ? 'untyped' : t)));
  return [svg, legend];
}
