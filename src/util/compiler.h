/* compiler.h: the only place for compiler-specific attributes and thread-locals. */
#ifndef NNOP_COMPILER_H
#define NNOP_COMPILER_H

#if defined(__MINGW32__) /* C99 formats (%zu): CMake builds MinGW with its ANSI stdio */
#define NNOP_PRINTF(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__) || defined(__clang__)
#define NNOP_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define NNOP_PRINTF(fmt, args)
#endif

#if defined(_MSC_VER)
#define NNOP_THREAD_LOCAL __declspec(thread)
#else
#define NNOP_THREAD_LOCAL _Thread_local
#endif

#endif /* NNOP_COMPILER_H */
