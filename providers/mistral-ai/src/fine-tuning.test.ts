import { describe, expect, test } from 'bun:test';
import { GatewayError } from '@gateway/sdk';
import { fromMistralJob, mistralJobBody } from './fine-tuning.ts';

const job = (status: string, extra: Record<string, unknown> = {}) => ({ id: 'j1', status, model: 'open-mistral-7b', modified_at: 1700, hyperparameters: {}, ...extra });

describe('Mistral fine-tuning translation', () => {
  test("each of Mistral's statuses maps to OpenAI's, and only Mistral's final ones end the job", () => {
    const seen = Object.fromEntries(
      ['QUEUED', 'STARTED', 'VALIDATING', 'VALIDATED', 'RUNNING', 'FAILED_VALIDATION', 'FAILED', 'SUCCESS', 'CANCELLED', 'CANCELLATION_REQUESTED'].map((s) => {
        const mapped = fromMistralJob(job(s));
        return [s, `${mapped.status}${mapped.ended ? ' (ended)' : ''}`];
      }),
    );
    expect(seen).toEqual({
      QUEUED: 'queued',
      STARTED: 'running',
      VALIDATING: 'validating_files',
      VALIDATED: 'queued',
      RUNNING: 'running',
      FAILED_VALIDATION: 'failed (ended)',
      FAILED: 'failed (ended)',
      SUCCESS: 'succeeded (ended)',
      CANCELLED: 'cancelled (ended)',
      CANCELLATION_REQUESTED: 'cancelled',
    });
    expect(fromMistralJob(job('SUCCESS')).finishedAt).toBe(1700);
    expect(fromMistralJob(job('RUNNING')).finishedAt).toBeNull();
  });

  test('hyperparameters: n_epochs is epochs, the multiplier scales 1e-4 both ways, batch_size has no equivalent', () => {
    const body = mistralJobBody({ model: 'm', hyperparameters: { n_epochs: 4, learning_rate_multiplier: 1.5, batch_size: 'auto' } }, 'f1', null);
    expect(body).toEqual({ model: 'm', training_files: [{ file_id: 'f1', weight: 1 }], hyperparameters: { epochs: 4, learning_rate: 0.00015 }, auto_start: true });
    expect(fromMistralJob(job('RUNNING', { hyperparameters: { epochs: 4, learning_rate: 0.00015 } })).hyperparameters).toEqual({
      n_epochs: 4,
      batch_size: 'auto',
      learning_rate_multiplier: 1.5,
    });
    expect(fromMistralJob(job('RUNNING')).hyperparameters).toEqual({ n_epochs: 'auto', batch_size: 'auto', learning_rate_multiplier: 'auto' });
    let refused: unknown;
    try {
      mistralJobBody({ model: 'm', hyperparameters: { batch_size: 16 } }, 'f1', null);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).status).toBe(400);
  });

  test('events oldest first with their level; checkpoints by step with the metrics Mistral reports', () => {
    const mapped = fromMistralJob(
      job('FAILED', {
        events: [
          { name: 'status-updated', data: { status: 'FAILED' }, created_at: 30 },
          { name: 'status-updated', data: { status: 'QUEUED' }, created_at: 10 },
        ],
        checkpoints: [
          { metrics: { train_loss: 0.5, valid_loss: null }, step_number: 20, created_at: 25 },
          { metrics: { train_loss: 0.9 }, step_number: 10, created_at: 15 },
        ],
      }),
    );
    expect(mapped.events.map((e) => [e.createdAt, e.level, e.message])).toEqual([
      [10, 'info', 'status-updated: QUEUED'],
      [30, 'error', 'status-updated: FAILED'],
    ]);
    expect(mapped.checkpoints).toEqual([
      { stepNumber: 10, createdAt: 15, metrics: { train_loss: 0.9 }, model: null },
      { stepNumber: 20, createdAt: 25, metrics: { train_loss: 0.5 }, model: null },
    ]);
    expect(mapped.error).toMatchObject({ code: 'job_failed' });
  });
});
