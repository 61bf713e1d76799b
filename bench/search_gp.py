#!/usr/bin/env python3
"""Gaussian-process search prototype, replayed on T4 results files (docs/SEARCH.md).

    python3 bench/search_gp.py BUDGET REPEATS FILE...     (needs numpy and scipy)

Matern 5/2 kernel with one length scale per feature (each parameter's choice
index scaled to [0, 1], plus its power-of-two alignment as forest_align sees
it), hyperparameters by marginal likelihood every 5 proposals, expected
improvement over every fresh recorded configuration, 10 random points first.
Prints the mean fraction of optimum per file over REPEATS seeds (1000 + r).
A prototype to compare with the C strategies, not one of them: it was worse
than forest_align and is kept so that its figures can be reproduced.
"""
import gzip, json, sys, math, numpy as np
from scipy.optimize import minimize
from scipy.stats import norm
from scipy.linalg import cho_factor, cho_solve

def twos(v):
    if v <= 0: return 0
    z = 1
    while v % 2 == 0 and z < 62: v //= 2; z += 1
    return z

def load(path):
    d = json.load(gzip.open(path) if path.endswith('.gz') else open(path))
    res = d['results']
    keys = list(res[0]['configuration'].keys())
    vals = {k: sorted(set(r['configuration'][k] for r in res)) for k in keys}
    free = [k for k in keys if len(vals[k]) > 1]
    cfgs, times = [], []
    for r in res:
        c = tuple(vals[k].index(r['configuration'][k]) for k in free)
        if r['invalidity'] == 'correct':
            t = r['measurements'][0]['value']
        elif r['invalidity'] in ('constraints',):
            continue
        else:
            t = None
        cfgs.append(c); times.append(t)
    return free, vals, cfgs, times

def features(free, vals, cfgs, align=True):
    cols = []
    C = np.array(cfgs)
    for j, k in enumerate(free):
        n = len(vals[k])
        cols.append(C[:, j] / (n - 1))
        if align and n > 2 and all(isinstance(v, int) for v in vals[k]):
            tw = np.array([twos(v) for v in vals[k]], float)
            if tw.max() > tw.min():
                cols.append((tw[C[:, j]] - tw.min()) / (tw.max() - tw.min()))
    return np.stack(cols, 1)

def kern(A, B, ls, sf2):
    d = (A[:, None, :] - B[None, :, :]) / ls
    r = np.sqrt(np.maximum((d * d).sum(-1), 0)) * math.sqrt(5)
    return sf2 * (1 + r + r * r / 3) * np.exp(-r)

def nll(theta, X, y):
    D = X.shape[1]
    ls = np.exp(theta[:D]); sf2 = np.exp(theta[D]); sn2 = np.exp(theta[D + 1]) + 1e-6
    K = kern(X, X, ls, sf2) + sn2 * np.eye(len(X))
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        return 1e10
    a = np.linalg.solve(L.T, np.linalg.solve(L, y))
    return 0.5 * y @ a + np.log(np.diag(L)).sum()

def run(F, cfgs, times, budget, rng, init=10, refit=5, xi=0.0):
    n = len(cfgs)
    order = rng.permutation(n)
    tried = []
    fresh = np.ones(n, bool)
    theta = None
    best = math.inf
    for step in range(min(budget, n)):
        if step < init:
            i = int(order[step])
        else:
            idx = np.array(tried)
            t = np.array([times[j] if times[j] is not None else np.nan for j in idx])
            y = np.log(t)
            worst = np.nanmax(y)
            y = np.where(np.isnan(y), worst + 1, y)
            mu, sd = y.mean(), y.std() + 1e-9
            ys = (y - mu) / sd
            X = F[idx]
            D = X.shape[1]
            if theta is None or step % refit == 0:
                x0 = theta if theta is not None else np.concatenate([np.zeros(D) + np.log(0.5), [0.0, np.log(0.01)]])
                bounds = [(np.log(0.05), np.log(20))] * D + [(np.log(0.05), np.log(20)), (np.log(1e-4), np.log(1))]
                x0 = np.clip(x0, [b[0] + 1e-9 for b in bounds], [b[1] - 1e-9 for b in bounds])
                r = minimize(nll, x0, args=(X, ys), method='L-BFGS-B', bounds=bounds, options={'maxiter': 50})
                theta = r.x
            ls = np.exp(theta[:D]); sf2 = np.exp(theta[D]); sn2 = np.exp(theta[D + 1]) + 1e-6
            K = kern(X, X, ls, sf2) + sn2 * np.eye(len(X))
            cf = cho_factor(K)
            alpha = cho_solve(cf, ys)
            cand = np.nonzero(fresh)[0]
            Ks = kern(F[cand], X, ls, sf2)
            m = Ks @ alpha
            v = np.maximum(sf2 - (Ks * cho_solve(cf, Ks.T).T).sum(1), 1e-12)
            s = np.sqrt(v)
            fbest = ys.min()
            z = (fbest - xi - m) / s
            ei = s * (z * norm.cdf(z) + norm.pdf(z))
            i = int(cand[np.argmax(ei)])
        fresh[i] = False
        tried.append(i)
        if times[i] is not None: best = min(best, times[i])
    return best

if __name__ == '__main__':
    budget = int(sys.argv[1]); reps = int(sys.argv[2]); files = sys.argv[3:]
    align = True
    tot = []
    for f in files:
        free, vals, cfgs, times = load(f)
        F = features(free, vals, cfgs, align)
        opt = min(t for t in times if t is not None)
        sc = []
        for r in range(reps):
            b = run(F, cfgs, times, budget, np.random.default_rng(1000 + r))
            sc.append(opt / b if b < math.inf else 0)
        print(f.split('/')[-1], '%.3f' % np.mean(sc), flush=True)
        tot.append(np.mean(sc))
    print('mean %.3f' % np.mean(tot))
