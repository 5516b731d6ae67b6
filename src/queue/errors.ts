import { RepgenError } from '../errors.js';

/** Redis or BullMQ refused a job: the handler says so on the issue instead of pretending it queued. */
export class EnqueueError extends RepgenError {
  override name = 'EnqueueError';
}
