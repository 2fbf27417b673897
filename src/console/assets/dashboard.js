// The dashboard's charts, drawn by Chart.js (served from its npm package at /app/assets/chart.umd.js).
// Each canvas has a role="img" label with its numbers, and the same numbers are in a table beside it.
const Chart = globalThis.Chart;
const dataOf = (id) => JSON.parse(document.getElementById(id)?.textContent ?? 'null');

function draw(canvas, config) {
  if (!canvas || !Chart) return;
  new Chart(canvas, { ...config, options: { responsive: true, maintainAspectRatio: false, animation: false, ...config.options } });
  canvas.dataset.rendered = 'true';
}

const trends = dataOf('trends-data');
if (trends) {
  const series = [
    ['Documents', 'documentsCreated', '#4c6ef5'],
    ['Sent', 'requestsSent', '#f59f00'],
    ['Completed', 'completed', '#2b8a3e'],
    ['Declined', 'declined', '#c92a2a'],
  ];
  draw(document.getElementById('trends-chart'), {
    type: 'bar',
    data: {
      labels: trends.map((month) => month.month),
      datasets: series.map(([label, key, color]) => ({ label, data: trends.map((month) => month[key]), backgroundColor: color })),
    },
    options: { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
  });
}

// Signing requests by status: one horizontal bar per status.
const byStatus = dataOf('breakdown-data');
if (byStatus) {
  const colors = { pending: '#f59f00', completed: '#2b8a3e', declined: '#c92a2a', cancelled: '#868e96', expired: '#7048e8' };
  const statuses = Object.keys(byStatus);
  draw(document.getElementById('breakdown-chart'), {
    type: 'bar',
    data: {
      labels: statuses.map((status) => status.charAt(0).toUpperCase() + status.slice(1)),
      datasets: [
        { label: 'Signing requests', data: statuses.map((status) => byStatus[status]), backgroundColor: statuses.map((status) => colors[status] ?? '#4c6ef5') },
      ],
    },
    options: { indexAxis: 'y', plugins: { legend: { display: false } }, scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } },
  });
}
