import type { Published, ResultPublisher, RunEnd, RunReport } from '../../src/pipeline/ports.js';
import type { StageName } from '../../src/pipeline/types.js';

/** A ResultPublisher that keeps everything it is given, for tests to read. */
export class MemoryPublisher implements ResultPublisher {
  readonly progressLines: { stage: StageName; message: string }[] = [];
  readonly reports: RunReport[] = [];
  readonly ends: RunEnd[] = [];

  async progress(stage: StageName, message: string): Promise<void> {
    this.progressLines.push({ stage, message });
  }

  async publish(report: RunReport): Promise<Published> {
    this.reports.push(report);
    return { locations: [`memory:${this.reports.length}`] };
  }

  async end(end: RunEnd): Promise<void> {
    this.ends.push(end);
  }
}
