/* nnop_export.h: the one export macro for every public function. Static builds define
 * neither NNOP_BUILDING_DLL nor NNOP_USING_DLL. */
#ifndef NNOP_EXPORT_H
#define NNOP_EXPORT_H

#if defined(NNOP_BUILDING_DLL) && defined(NNOP_USING_DLL)
#error "define NNOP_BUILDING_DLL or NNOP_USING_DLL, not both"
#endif

#if defined(_WIN32) && defined(NNOP_BUILDING_DLL)
#define NNOP_API __declspec(dllexport)
#elif defined(_WIN32) && defined(NNOP_USING_DLL)
#define NNOP_API __declspec(dllimport)
#elif defined(__GNUC__)
#define NNOP_API __attribute__((visibility("default")))
#else
#define NNOP_API
#endif

#endif /* NNOP_EXPORT_H */
