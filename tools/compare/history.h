/*
 * history.h — change points in a kernel's history (`jager compare --history`): the main
 * branch's stored results in order, one value per result (the median of its runs), searched
 * for steps by binary segmentation with a permutation test, so a slow drift made of many
 * sub-threshold changes is found without failing any pull request.
 *
 * On log values, the best split of a segment maximises the drop in squared error
 * k(n−k)/n · (mean_left − mean_right)²; its p-value is the share of 999 shuffles of the
 * segment (a fixed-seed generator: the same history gives the same answer) whose best split
 * does as well. A split counts when p < alpha and the step exceeds the threshold; both halves
 * are then searched again. Segments shorter than 2·JH_MIN_SEG are not split.
 */
#ifndef JAGER_COMPARE_HISTORY_H
#define JAGER_COMPARE_HISTORY_H
#include <stddef.h>

#define JH_MIN_SEG 3

typedef struct jh_change {
    size_t at;          /**< index of the first value after the step */
    double ratio;       /**< exp(mean after − mean before) on the segment that was split */
    double p;           /**< permutation p-value */
} jh_change;

/**
 * \brief Find change points in \p v (n positive values, in time order).
 * \param out room for \p cap changes, written in index order.
 * \return the number found (≤ cap), or -1 on bad input or out of memory.
 */
int jh_find_changes(const double *v, size_t n, double threshold, double alpha, jh_change *out, size_t cap);
#endif
