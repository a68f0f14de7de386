// A process held to a fraction of one core, through a cgroup of its own (v2 `cpu.max`, or v1's CFS
// quota). bench/cluster.ts uses it so that one API process, not the machine, is what runs out: on a
// machine with fewer cores than the database, the API processes and the load generator need, a second
// API process only takes CPU from the others, and the ratio of two to one says nothing of scaling.
// Needs root and a writable cgroup hierarchy; `cpuCapProblem()` says why not, or null.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const V2_ROOT = '/sys/fs/cgroup';
const V1_CPU = '/sys/fs/cgroup/cpu';
const PERIOD_US = 100_000;

function hierarchy(): { version: 2 | 1; root: string } | null {
  if (existsSync(join(V2_ROOT, 'cgroup.controllers'))) return { version: 2, root: V2_ROOT };
  if (existsSync(join(V1_CPU, 'cpu.cfs_quota_us'))) return { version: 1, root: V1_CPU };
  return null;
}

export function cpuCapProblem(): string | null {
  if (process.getuid?.() !== 0) return 'capping a process needs root (cgroups)';
  const found = hierarchy();
  if (!found) return `no cgroup CPU controller at ${V2_ROOT} (v2) or ${V1_CPU} (v1)`;
  if (found.version === 2 && !readFileSync(join(V2_ROOT, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('cpu'))
    return 'the cgroup v2 hierarchy has no cpu controller';
  return null;
}

/** Moves `pid` (all its threads) into a new cgroup limited to `cores` of CPU; answers its removal. */
export function capCpu(pid: number, cores: number): { release(): void } {
  const found = hierarchy();
  if (!found) throw new Error(cpuCapProblem() ?? 'no cgroup hierarchy');
  removeGroupsOfEndedBenches(found.root);
  const group = join(found.root, `siteplane-bench-${process.pid}-${pid}`);
  const quota = Math.max(1000, Math.round(cores * PERIOD_US));
  if (found.version === 2) writeFileSync(join(V2_ROOT, 'cgroup.subtree_control'), '+cpu');
  mkdirSync(group);
  if (found.version === 2) writeFileSync(join(group, 'cpu.max'), `${quota} ${PERIOD_US}`);
  else {
    writeFileSync(join(group, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(group, 'cpu.cfs_quota_us'), String(quota));
  }
  writeFileSync(join(group, 'cgroup.procs'), String(pid));
  return {
    // After the process has exited: an empty cgroup is removed with rmdir.
    release: () => {
      try {
        rmdirSync(group);
      } catch (error) {
        console.error(`could not remove ${group}: ${(error as Error).message}`);
      }
    },
  };
}

/**
 * A bench ended by a signal leaves its groups behind (they can only be removed once empty, after its
 * processes have gone). Groups of a bench whose process has ended are removed here; one whose
 * processes still run is not empty, and rmdir leaves it.
 */
function removeGroupsOfEndedBenches(root: string): void {
  for (const name of readdirSync(root)) {
    const owner = /^siteplane-bench-(\d+)-\d+$/.exec(name)?.[1];
    if (!owner || Number(owner) === process.pid || existsSync(`/proc/${owner}`)) continue;
    try {
      rmdirSync(join(root, name));
    } catch {}
  }
}
