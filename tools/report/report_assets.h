/* The report page's assets, embedded at build time by embed_assets.cmake from
 * page/ (template.html, report.css, js/NN-name.js joined in name order). */
#ifndef JAGER_TOOLS_REPORT_ASSETS_H
#define JAGER_TOOLS_REPORT_ASSETS_H
#include <stddef.h>

extern const unsigned char jr_asset_template[]; /**< HTML with {{NAME}} placeholders */
extern const size_t jr_asset_template_len;
extern const unsigned char jr_asset_css[];
extern const size_t jr_asset_css_len;
extern const unsigned char jr_asset_js[];
extern const size_t jr_asset_js_len;
extern const char jr_asset_js_sha256[];  /**< hex SHA-256 of exactly jr_asset_js */
extern const char jr_asset_css_sha256[]; /**< hex SHA-256 of exactly jr_asset_css */

#endif
