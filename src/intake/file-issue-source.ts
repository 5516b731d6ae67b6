// Stage 0 for `repgen reproduce` and `repgen bench`: the issue is a file's text, the project a local repository
// (a clone, a mirror or a plain folder) checked out at the ref the flags or the report name.
import { localBisectSource } from '../bisect/local-bisect-source.js';
import { missingFilesNote } from '../workspace/find-missing-files.js';
import { checkoutRef, prepareWorkspace } from '../workspace/prepare-workspace.js';
import type { IssueSource, ProjectCheckout } from '../pipeline/ports.js';

/** A local repository and the refs to use of it. */
export interface LocalProject {
  repoDir: string;
  /** `owner/name`; read from the origin remote when unset. */
  repo?: string | null;
  /** The ref to reproduce at; null: one the report links or names, else the tree as it is. */
  ref?: string | null;
  /** A fixing ref: the reproduction is re-run there. */
  verifyFix?: string | null;
  /**
   * Bisect from this ref (where it worked) to the issue's ref once reproduced; null: from a version or commit
   * the report says worked, if any; `false`: never.
   */
  bisect?: string | null | false;
  /** Where checkouts at a ref go (REPGEN_CHECKOUT_CACHE_DIR). */
  cacheDir: string;
  /** Byte-compiles fresh checkouts (the sandbox mounts them read-only). */
  python: string;
}

export interface FileIssueSourceOptions {
  /** The issue file as shown in notes (`issue.md`, `so-046`). */
  label: string;
  /** Its text, already read and checked (readIssueFile): the whole of it is the body. */
  text: string;
  /** The project, or a checkout already made (a bench case's fail-to-pass pair); absent: no repository. */
  project?: LocalProject | ProjectCheckout | null;
}

/**
 * An issue from a file. `checkout` resolves and checks out the refs (a ref that does not exist is a
 * WorkspaceError before any script runs); the first line `# title` stays in the body, where the intake
 * stage reads it.
 */
export function fileIssueSource(options: FileIssueSourceOptions): IssueSource {
  const { project } = options;
  return {
    label: options.label,
    readIssue: async () => ({ title: '', body: options.text }),
    checkout: async (_issue, signal) => {
      if (!project) return null;
      if (!('cacheDir' in project)) return project;
      return checkoutLocal(project, options.text, signal);
    },
  };
}

/** The project at its ref (and at the fixing ref): what every run of the source sees. */
export async function checkoutLocal(project: LocalProject, issueText: string, signal?: AbortSignal): Promise<ProjectCheckout> {
  const prepared = await prepareWorkspace({
    repoDir: project.repoDir,
    repo: project.repo ?? null,
    explicitRef: project.ref ?? null,
    issueText,
    cacheDir: project.cacheDir,
    python: project.python,
    signal,
  });
  const fix = project.verifyFix
    ? await checkoutRef({
        repoDir: project.repoDir,
        repo: prepared.ref.repo ?? project.repo ?? null,
        ref: project.verifyFix,
        cacheDir: project.cacheDir,
        python: project.python,
        signal,
      })
    : null;
  const bisect =
    project.bisect !== false && prepared.ref.sha
      ? await localBisectSource({
          repoDir: project.repoDir,
          repo: prepared.ref.repo ?? project.repo ?? project.repoDir,
          good: project.bisect ?? null,
          issueText,
          packages: prepared.workspace.packages ?? [],
          bad: { ref: prepared.ref.ref, sha: prepared.ref.sha },
          cacheDir: project.cacheDir,
          python: project.python,
        })
      : null;
  const fixNotes = fix?.missing.length ? [missingFilesNote(fix.missing, `the fixing ref ${project.verifyFix}`)] : [];
  const extraNotes = [...(bisect?.notes ?? []), ...fixNotes];
  const ref = extraNotes.length ? { ...prepared.ref, notes: [...prepared.ref.notes, ...extraNotes] } : prepared.ref;
  return {
    repoDir: prepared.workspace.hostPath,
    workspace: prepared.workspace,
    ...(prepared.ref.sha ? { sha: prepared.ref.sha } : {}),
    ref,
    ...(bisect?.source ? { bisect: bisect.source } : {}),
    ...(fix && project.verifyFix ? { fix: { ref: project.verifyFix, sha: fix.sha, workspace: fix.workspace } } : {}),
  };
}
