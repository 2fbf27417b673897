// The image's HEALTHCHECK: GET /healthz on this container's PORT answers 200 (api and worker alike).
const http = require('node:http');

const request = http.get({ host: '127.0.0.1', port: Number(process.env.PORT || 3000), path: '/healthz', timeout: 2500 }, (response) => {
  process.exit(response.statusCode === 200 ? 0 : 1);
});
request.on('timeout', () => request.destroy(new Error('timeout')));
request.on('error', () => process.exit(1));
