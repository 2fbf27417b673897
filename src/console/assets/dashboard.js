// The monthly trends chart, drawn by Chart.js (served from its npm package at /app/assets/chart.umd.js).
const canvas = document.getElementById('trends-chart');
const data = JSON.parse(document.getElementById('trends-data').textContent);
const Chart = globalThis.Chart;

if (canvas && Chart) {
  const series = [
    ['Documents', 'documentsCreated', '#4c6ef5'],
    ['Sent', 'requestsSent', '#f59f00'],
    ['Completed', 'completed', '#2b8a3e'],
    ['Declined', 'declined', '#c92a2a'],
  ];
  new Chart(canvas, {
    type: 'bar',
    data: {
      labels: data.map((month) => month.month),
      datasets: series.map(([label, key, color]) => ({ label, data: data.map((month) => month[key]), backgroundColor: color })),
    },
    options: {
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
    },
  });
  canvas.dataset.rendered = 'true';
}
