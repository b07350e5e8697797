/**
 * The batch inference control plane of the local Bedrock server: CreateModelInvocationJob (POST
 * /model-invocation-job), GetModelInvocationJob (GET /model-invocation-job/{jobIdentifier}, an ARN or a job id) and
 * StopModelInvocationJob (POST …/stop), with their request checks and errors as the API reference gives them.
 *
 * A job moves one step each time it is read: Submitted → Validating → InProgress → Completed (PartiallyCompleted when
 * a record failed). On the step out of InProgress it "runs": it reads the input object from the local object store
 * (tests/mocks/s3-server.ts), answers each record as Converse would (an invalid record gets an `error`), and writes
 * `<output s3Uri><job id>/<input file name>.out` (records in reverse order: Bedrock does not keep the input's order)
 * and `manifest.json.out`. A stopped job goes Stopping → Stopped without output. A missing input object fails the job.
 */
import { isObj, type Obj } from '../../mocks/harness.ts';

/** The objects of the local S3 store, by `<bucket>/<key>`. */
export interface S3Objects {
  objects: Map<string, Uint8Array>;
}

export type ConverseAnswer = (body: Obj, model: string) => { json: Obj } | { error: string };

export interface BatchJob {
  jobArn: string;
  jobName: string;
  modelId: string;
  roleArn: string;
  clientRequestToken?: string;
  modelInvocationType: string;
  status: string;
  message?: string;
  submitTime: string;
  lastModifiedTime: string;
  endTime?: string;
  inputDataConfig: Obj;
  outputDataConfig: Obj;
  timeoutDurationInHours: number;
  jobExpirationTime: string;
  totalRecordCount?: number;
  processedRecordCount?: number;
  successRecordCount?: number;
  errorRecordCount?: number;
}

const ACCOUNT = '123456789012';
const REGION = 'us-east-1';
const JOB_NAME = /^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9+\-.]){0,63}$/;
const TOKEN = /^[a-zA-Z0-9]{1,256}(-*[a-zA-Z0-9]){0,256}$/;
const ROLE = /^arn:aws(-[^:]+)?:iam::([0-9]{12})?:role\/.+$/;
const S3_URI = /^s3:\/\/[a-z0-9][.\-a-z0-9]{1,61}[a-z0-9](\/.*)?$/;
const KEYS = new Set([
  'clientRequestToken', 'inputDataConfig', 'jobName', 'modelId', 'modelInvocationType', 'outputDataConfig', 'roleArn', 'tags',
  'timeoutDurationInHours', 'vpcConfig',
]);

class Refused extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

function answer(status: number, type: string, message: string): Response {
  return Response.json({ message }, { status, headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` } });
}

const invalid = (message: string): never => {
  throw new Refused(400, 'ValidationException', message);
};

/** `s3://bucket/key` → the object store's `bucket/key`. */
const storeKey = (uri: string) => uri.slice('s3://'.length);

export class BatchJobs {
  readonly jobs = new Map<string, BatchJob>();

  constructor(
    private readonly s3: S3Objects,
    private readonly converse: ConverseAnswer,
  ) {}

  handle(method: string, rawPath: string, text: string): Response {
    try {
      if (rawPath === '/model-invocation-job' && method === 'POST') return Response.json(this.create(text));
      const match = /^\/model-invocation-job\/([^/]+)(\/stop)?$/.exec(rawPath);
      if (match && method === 'GET' && !match[2]) return Response.json(this.advance(this.find(decodeURIComponent(match[1] as string))));
      if (match && method === 'POST' && match[2]) {
        this.stop(this.find(decodeURIComponent(match[1] as string)));
        return Response.json({});
      }
      return answer(404, 'UnknownOperationException', `No operation at ${method} ${rawPath}`);
    } catch (e) {
      if (e instanceof Refused) return answer(e.status, e.type, e.message);
      throw e;
    }
  }

  private find(identifier: string): BatchJob {
    if (!/^((arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:model-invocation-job\/)?[a-z0-9]{12})$/.test(identifier)) invalid(`1 validation error detected: Value '${identifier}' at 'jobIdentifier' failed to satisfy constraint`);
    const job = this.jobs.get(identifier.slice(identifier.lastIndexOf('/') + 1));
    if (!job) throw new Refused(404, 'ResourceNotFoundException', `The specified job ${identifier} was not found`);
    return job;
  }

  private create(text: string): Obj {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Refused(400, 'SerializationException', 'Unable to parse the request body as JSON');
    }
    if (!isObj(body)) return invalid('The request body must be a JSON object');
    for (const key of Object.keys(body)) if (!KEYS.has(key)) invalid(`Unknown field ${key}`);
    if (typeof body.jobName !== 'string' || !JOB_NAME.test(body.jobName)) invalid("Value at 'jobName' failed to satisfy constraint");
    if (typeof body.roleArn !== 'string' || !ROLE.test(body.roleArn)) invalid("Value at 'roleArn' failed to satisfy constraint");
    if (typeof body.modelId !== 'string' || !body.modelId) invalid("Value at 'modelId' failed to satisfy constraint");
    if (body.clientRequestToken !== undefined && (typeof body.clientRequestToken !== 'string' || !TOKEN.test(body.clientRequestToken))) invalid("Value at 'clientRequestToken' failed to satisfy constraint");
    if (body.modelInvocationType !== undefined && body.modelInvocationType !== 'InvokeModel' && body.modelInvocationType !== 'Converse') invalid("Value at 'modelInvocationType' failed to satisfy enum value set: [InvokeModel, Converse]");
    const hours = body.timeoutDurationInHours ?? 168;
    if (!Number.isInteger(hours) || (hours as number) < 24 || (hours as number) > 168) invalid("Value at 'timeoutDurationInHours' failed to satisfy constraint: Member must have value between 24 and 168");
    const input = isObj(body.inputDataConfig) && isObj(body.inputDataConfig.s3InputDataConfig) ? body.inputDataConfig.s3InputDataConfig : undefined;
    if (!input || Object.keys(body.inputDataConfig as Obj).length !== 1 || typeof input.s3Uri !== 'string' || !S3_URI.test(input.s3Uri)) invalid('inputDataConfig must hold s3InputDataConfig with an s3Uri');
    if (input?.s3InputFormat !== undefined && input.s3InputFormat !== 'JSONL') invalid("Value at 's3InputFormat' failed to satisfy enum value set: [JSONL]");
    const output = isObj(body.outputDataConfig) && isObj(body.outputDataConfig.s3OutputDataConfig) ? body.outputDataConfig.s3OutputDataConfig : undefined;
    if (!output || typeof output.s3Uri !== 'string' || !S3_URI.test(output.s3Uri)) invalid('outputDataConfig must hold s3OutputDataConfig with an s3Uri');

    const token = body.clientRequestToken as string | undefined;
    const same = token ? [...this.jobs.values()].find((j) => j.clientRequestToken === token) : undefined;
    if (same) return { jobArn: same.jobArn };
    if ([...this.jobs.values()].some((j) => j.jobName === body.jobName)) throw new Refused(409, 'ConflictException', `A job named ${String(body.jobName)} already exists`);

    const id = crypto.randomUUID().replaceAll('-', '').slice(0, 12);
    const now = new Date();
    const job: BatchJob = {
      jobArn: `arn:aws:bedrock:${REGION}:${ACCOUNT}:model-invocation-job/${id}`,
      jobName: body.jobName as string,
      modelId: body.modelId as string,
      roleArn: body.roleArn as string,
      ...(token ? { clientRequestToken: token } : {}),
      modelInvocationType: (body.modelInvocationType as string | undefined) ?? 'InvokeModel',
      status: 'Submitted',
      submitTime: now.toISOString(),
      lastModifiedTime: now.toISOString(),
      inputDataConfig: body.inputDataConfig as Obj,
      outputDataConfig: body.outputDataConfig as Obj,
      timeoutDurationInHours: hours as number,
      jobExpirationTime: new Date(now.getTime() + (hours as number) * 3_600_000).toISOString(),
    };
    this.jobs.set(id, job);
    return { jobArn: job.jobArn };
  }

  private stop(job: BatchJob): void {
    if (!['Submitted', 'Validating', 'Scheduled', 'InProgress'].includes(job.status)) invalid(`The job cannot be stopped: it is ${job.status}`);
    this.set(job, 'Stopping');
  }

  private set(job: BatchJob, status: string): void {
    job.status = status;
    job.lastModifiedTime = new Date().toISOString();
    if (['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired'].includes(status)) job.endTime = job.lastModifiedTime;
  }

  /** The job one step on, as GetModelInvocationJob answers it. */
  private advance(job: BatchJob): BatchJob {
    switch (job.status) {
      case 'Submitted':
        this.set(job, 'Validating');
        break;
      case 'Validating': {
        const uri = ((job.inputDataConfig.s3InputDataConfig as Obj).s3Uri as string);
        if (!this.s3.objects.has(storeKey(uri))) {
          job.message = `The input ${uri} could not be read`;
          this.set(job, 'Failed');
        } else this.set(job, 'InProgress');
        break;
      }
      case 'InProgress':
        this.run(job);
        break;
      case 'Stopping':
        this.set(job, 'Stopped');
        break;
    }
    return job;
  }

  /** Answers every record and writes the output file and the manifest. */
  private run(job: BatchJob): void {
    const inputUri = (job.inputDataConfig.s3InputDataConfig as Obj).s3Uri as string;
    const outputUri = ((job.outputDataConfig.s3OutputDataConfig as Obj).s3Uri as string).replace(/\/?$/, '/');
    const lines = new TextDecoder().decode(this.s3.objects.get(storeKey(inputUri))).split('\n').filter((l) => l.trim());
    let success = 0;
    let errors = 0;
    const out = lines.map((line) => {
      const record = JSON.parse(line) as Obj;
      const input = isObj(record.modelInput) ? record.modelInput : {};
      const answered = job.modelInvocationType === 'Converse' ? this.converse(input, job.modelId) : { error: 'This test server answers Converse jobs only' };
      if ('error' in answered) {
        errors++;
        return { recordId: record.recordId, modelInput: input, error: { errorCode: 400, errorMessage: answered.error } };
      }
      success++;
      return { recordId: record.recordId, modelInput: input, modelOutput: answered.json };
    });
    const folder = storeKey(`${outputUri}${job.jobArn.slice(job.jobArn.lastIndexOf('/') + 1)}/`);
    const encoder = new TextEncoder();
    const name = inputUri.slice(inputUri.lastIndexOf('/') + 1);
    this.s3.objects.set(`${folder}${name}.out`, encoder.encode(`${out.reverse().map((o) => JSON.stringify(o)).join('\n')}\n`));
    const manifest = { totalRecordCount: lines.length, processedRecordCount: lines.length, successRecordCount: success, errorRecordCount: errors, inputTokenCount: 0, outputTokenCount: 0 };
    this.s3.objects.set(`${folder}manifest.json.out`, encoder.encode(JSON.stringify(manifest)));
    Object.assign(job, { totalRecordCount: lines.length, processedRecordCount: lines.length, successRecordCount: success, errorRecordCount: errors });
    this.set(job, errors ? 'PartiallyCompleted' : 'Completed');
  }
}
