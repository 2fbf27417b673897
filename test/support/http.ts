/** A small fetch wrapper for tests: JSON in, parsed JSON (or bytes) out, with the status and headers. */
export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  bytes: Buffer;
}

export function client(baseUrl: string, apiKey?: string) {
  return async function request(
    method: string,
    path: string,
    options: { json?: unknown; body?: BodyInit | Buffer; headers?: Record<string, string> } = {},
  ): Promise<TestResponse> {
    const headers: Record<string, string> = { ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}), ...options.headers };
    let body = Buffer.isBuffer(options.body) ? new Uint8Array(options.body) : options.body;
    if (options.json !== undefined) {
      headers['Content-Type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const bytes = Buffer.from(await response.arrayBuffer());
    const type = response.headers.get('content-type') ?? '';
    return {
      status: response.status,
      headers: response.headers,
      bytes,
      body: type.includes('application/json') && bytes.length ? JSON.parse(bytes.toString()) : bytes.toString(),
    };
  };
}

export type Request = ReturnType<typeof client>;
