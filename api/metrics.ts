/** Request counters per route and status, served as Prometheus text at /metrics. */
export class Metrics {
  private readonly requests = new Map<string, number>();

  count(method: string, route: string, status: number): void {
    const key = `method="${method}",route="${route}",status="${status}"`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
  }

  render(): string {
    const lines = [
      '# HELP drydock_http_requests_total HTTP requests answered, by route and status.',
      '# TYPE drydock_http_requests_total counter',
    ];
    for (const [labels, value] of this.requests)
      lines.push(`drydock_http_requests_total{${labels}} ${value}`);
    return `${lines.join('\n')}\n`;
  }
}
